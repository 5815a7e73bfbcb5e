%% @doc Source addresses of a load: the local addresses users' sockets are bound to, so that one
%% machine opens more connections to a server port than one address allows (an address reaches
%% a server port once per ephemeral port, about 28 000 times here). Users take the addresses in
%% turn (round robin, per agent). As Tsung, any address of the load node's host is accepted:
%% `resolve/1' checks them there (`inet:getifaddrs/0') and reads the addresses of an interface
%% named instead (Tsung's `<ip scan="true" value="eth0">'); loopback's whole network (127.0.0.2
%% and on, which lo answers without naming them) counts as assigned.
%%
%% The chosen address is kept in the user's process dictionary, as the byte tally of
%% `beamscale_load_request' is: one process per user, so the kinds read it when they connect
%% without an argument of their own.
-module(beamscale_load_source).

-export([check/1, parse/1, range/1, range6/1, resolve/1, new/1, choose/1, opts/0,
         connect_opts/0, peer/1, to_text/1, format_error/1]).
-export([port_counters/1, local_port/1]).
-export_type([sources/0, source/0]).

%% The addresses and a counter shared by the users of one agent (no process, no lock).
-opaque sources() :: none | {tuple(), atomics:atomics_ref()}.
%% An address, or an interface whose addresses the load node reads.
-type source() :: inet:ip_address() | {interface, string()}.

-define(KEY, {?MODULE, ip}).
%% Linux's <netinet/in.h>: level and name of the option that binds an address without a port.
-define(SOL_IP, 0).
-define(IP_BIND_ADDRESS_NO_PORT, 24).
%% Source addresses one run may name: far above what ephemeral ports make useful (each address
%% gives about 28 000 connections per server port); more is a typo.
-define(MAX_SOURCES, 256).

%% @doc The scenario's `source_ips' checked: a non-empty list of addresses as strings
%% ("127.0.0.2", "::1") or `{interface, "eth0"}'; a wrong one throws `{bad, [], Message}'
%% (`beamscale_load_scenario'). Whether the load node has them is `resolve/1''s to say.
-spec check(term()) -> [source()].
check(L) when is_list(L), L =/= [], length(L) =< ?MAX_SOURCES ->
    Sources = [case S of
                   {interface, Name} -> interface(Name);
                   _ -> case parse(S) of
                            {ok, A} -> A;
                            {error, Msg} -> throw({bad, [], Msg})
                        end
               end || S <- L],
    case families([A || A <- Sources, is_tuple(A), tuple_size(A) > 2]) of
        ok -> Sources;
        {error, Msg} -> throw({bad, [], Msg})
    end;
check(_) ->
    throw({bad, [], io_lib:format("expected a list of 1 to ~b source addresses, e.g. "
                                  "[\"127.0.0.2\", \"127.0.0.3\"] or [{interface, \"eth0\"}]",
                                  [?MAX_SOURCES])}).

interface(Name) ->
    case io_lib:printable_latin1_list(Name) andalso Name =/= [] andalso length(Name) < 16 of
        true -> {interface, Name};
        false ->
            throw({bad, [], "{interface, Name}: expected an interface name such as \"eth0\""})
    end.

families(Addrs) ->
    case lists:usort([tuple_size(A) || A <- Addrs]) of
        L when length(L) < 2 -> ok;
        _ -> {error, "IPv4 and IPv6 source addresses mixed: a socket of one family cannot bind "
                     "an address of the other"}
    end.

%% @doc One address from its text (not the unspecified address, nor a multicast one).
-spec parse(term()) -> {ok, inet:ip_address()} | {error, string()}.
parse(S) ->
    Text = case S of
               B when is_binary(B) -> unicode:characters_to_list(B);
               _ -> S
           end,
    case io_lib:printable_unicode_list(Text) andalso inet:parse_strict_address(Text) of
        {ok, {0, 0, 0, 0}} -> {error, Text ++ ": the unspecified address binds nothing"};
        {ok, {0, 0, 0, 0, 0, 0, 0, 0}} ->
            {error, Text ++ ": the unspecified address binds nothing"};
        {ok, {A, _, _, _}} when A >= 224 -> {error, Text ++ ": not a unicast address"};
        {ok, A} -> {ok, A};
        _ -> {error, io_lib:format("~0tp is not an IP address", [S], [{chars_limit, 80}])}
    end.

%% @doc Tsung's `<iprange value>': IPv4 with a range `From-To' in any part ("10.0.0.1-20",
%% "10.0.1-2.1-254"), at most ?MAX_SOURCES addresses.
-spec range(string()) -> {ok, [inet:ip4_address()]} | {error, string()}.
range(Text) ->
    Parts = [case string:split(P, "-") of
                 [A] -> {int(A), int(A)};
                 [A, B] -> {int(A), int(B)}
             end || P <- string:split(Text, ".", all)],
    case Parts of
        [_, _, _, _] when is_tuple(hd(Parts)) ->
            case lists:all(fun({A, B}) -> is_integer(A) andalso is_integer(B) andalso A =< B
                                              andalso B =< 255 end, Parts) of
                true -> expand(Parts);
                false -> {error, Text ++ ": expected A.B.C.D with ranges such as 1-20 (0 to 255)"}
            end;
        _ -> {error, Text ++ ": expected A.B.C.D with ranges such as 1-20 (IPv4)"}
    end.

%% @doc `<iprange version="v6" value>': an IPv6 address with a range `From-To' (hexadecimal) in
%% any of its groups ("fd77::2-9", "fd77:0-1::1-3"), as the IPv4 form has one in any part (Tsung
%% 1.7 reads only that one), at most ?MAX_SOURCES addresses.
-spec range6(string()) -> {ok, [inet:ip6_address()]} | {error, string()}.
range6(Text) ->
    %% The address with each range's lower bound, and with its upper: each group's range is
    %% then between the two (a group without one is the same in both).
    Ends = [inet:parse_ipv6strict_address(lists:flatten(
              lists:join(":", [lists:nth(I, string:split(G, "-") ++ [G])
                               || G <- string:split(Text, ":", all)]))) || I <- [1, 2]],
    Hex = io_lib:printable_latin1_list(Text)
        andalso lists:all(fun(G) -> length(string:split(G, "-", all)) =< 2 end,
                          string:split(Text, ":", all)),
    case {Hex, Ends} of
        {true, [{ok, Lo}, {ok, Hi}]} ->
            Parts = lists:zip(tuple_to_list(Lo), tuple_to_list(Hi)),
            case lists:all(fun({A, B}) -> A =< B end, Parts) of
                true -> expand6(Parts);
                false -> {error, Text ++ ": a range From-To with From above To"}
            end;
        _ -> {error, Text ++ ": expected an IPv6 address with ranges such as fd00::2-9 "
                            "(hexadecimal)"}
    end.

expand6(Parts) ->
    case lists:foldl(fun({X, Y}, N) -> N * (Y - X + 1) end, 1, Parts) of
        N when N =< ?MAX_SOURCES ->
            {ok, [list_to_tuple(A) || A <- combos(Parts)]};
        N -> {error, io_lib:format("~b addresses: at most ~b", [N, ?MAX_SOURCES])}
    end.

combos([]) -> [[]];
combos([{X, Y} | Rest]) -> [[G | T] || G <- lists:seq(X, Y), T <- combos(Rest)].

int(S) ->
    try list_to_integer(S) of
        N when N >= 0 -> N;
        _ -> bad
    catch error:badarg -> bad
    end.

expand([{A1, A2}, {B1, B2}, {C1, C2}, {D1, D2}] = Parts) ->
    case lists:foldl(fun({X, Y}, N) -> N * (Y - X + 1) end, 1, Parts) of
        N when N =< ?MAX_SOURCES ->
            {ok, [{A, B, C, D} || A <- lists:seq(A1, A2), B <- lists:seq(B1, B2),
                                  C <- lists:seq(C1, C2), D <- lists:seq(D1, D2)]};
        N -> {error, io_lib:format("~b addresses: at most ~b", [N, ?MAX_SOURCES])}
    end.

%% @doc On the load node: the sources as addresses of this host, an interface's read (its IPv4
%% addresses, else its IPv6 ones); an address no interface has, or an interface that does not
%% exist or has none, is an error naming the host's interfaces and addresses.
-spec resolve([source()]) -> {ok, [inet:ip_address()]} | {error, {?MODULE, term()}}.
resolve([]) -> {ok, []};
resolve(Sources) ->
    {ok, Ifs} = inet:getifaddrs(),
    Have = [{Name, [{A, M} || {A, M} <- pairs(Opts), not is_link_local(A)],
             lists:member(loopback, proplists:get_value(flags, Opts, []))}
            || {Name, Opts} <- Ifs],
    try
        Addrs = lists:append([one(S, Have) || S <- Sources]),
        case families(Addrs) of
            ok -> {ok, Addrs};
            {error, Msg} -> {error, {?MODULE, {families, Msg}}}
        end
    catch throw:Why -> {error, {?MODULE, Why}}
    end.

%% getifaddrs gives an interface's options as a list where `addr' is followed by its `netmask'.
pairs([{addr, A}, {netmask, M} | T]) -> [{A, M} | pairs(T)];
pairs([{addr, A} | T]) -> [{A, none} | pairs(T)];
pairs([_ | T]) -> pairs(T);
pairs([]) -> [].

is_link_local({16#fe80, _, _, _, _, _, _, _}) -> true;
is_link_local(_) -> false.

one({interface, Name}, Have) ->
    case [As || {N, As, _} <- Have, N =:= Name] of
        [As] when As =/= [] ->
            case [A || {A, _} <- As, tuple_size(A) =:= 4] of
                [] -> [A || {A, _} <- As];
                V4 -> V4
            end;
        _ -> throw({no_interface, Name, summary(Have)})
    end;
one(A, Have) ->
    case [N || {N, As, Loop} <- Have, {B, Mask} <- As,
               B =:= A orelse Loop andalso same_net(A, B, Mask)] of
        [] -> throw({not_assigned, A, summary(Have)});
        _ -> [A]
    end.

same_net(A, B, Mask) when tuple_size(A) =:= tuple_size(B), tuple_size(B) =:= tuple_size(Mask) ->
    lists:all(fun({X, Y, M}) -> X band M =:= Y band M end,
              lists:zip3(tuple_to_list(A), tuple_to_list(B), tuple_to_list(Mask)));
same_net(_, _, _) -> false.

summary(Have) ->
    lists:join("; ", [[N, " ", lists:join(", ", [inet:ntoa(A) || {A, _} <- As])]
                      || {N, As, _} <- Have]).

%% @doc The text of `resolve/1''s errors.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({not_assigned, A, Ifs}) ->
    io_lib:format("source address ~ts is not an address of the load node ~ts (its interfaces: "
                  "~ts)", [inet:ntoa(A), node(), Ifs]);
format_error({no_interface, Name, Ifs}) ->
    io_lib:format("interface ~ts: none with an address on the load node ~ts (its interfaces: "
                  "~ts)", [Name, node(), Ifs]);
format_error({families, Msg}) -> Msg;
format_error(R) -> io_lib:format("~0tp", [R]).

%% @doc The sources of an agent (`none': the system picks, as without `source_ips').
-spec new([inet:ip_address()]) -> sources().
new([]) -> none;
new(Addrs) -> {list_to_tuple(Addrs), atomics:new(1, [])}.

%% @doc Choose this user's address (the next in turn); its sockets bind it from now on.
-spec choose(sources()) -> ok.
choose(none) -> ok;
choose({Addrs, Counter}) ->
    I = atomics:add_get(Counter, 1, 1),
    N = tuple_size(Addrs),
    %% Every other user of an address binds it without a port (connect_opts/0).
    put(?KEY, {element((I - 1) rem N + 1, Addrs), (I - 1) div N rem 2}),
    ok.

%% @doc The options that bind this user's address (none when it has none).
-spec opts() -> [gen_tcp:connect_option()].
opts() ->
    case get(?KEY) of
        undefined -> [];
        {{_, _, _, _} = A, _} -> [{ip, A}];
        {A, _} -> [inet6, {ip, A}]
    end.

%% @doc The options of a TCP connect from this user's address. Linux searches the local ports
%% of an address from a different half each way: odd ports first when a socket binds port 0,
%% even ones first when it binds the address alone (IP_BIND_ADDRESS_NO_PORT) and connect picks
%% the port. Each way scans its half end to end once that half is full, at every connect: on
%% three addresses (14 116 ports a half) a 62 500-user run fell from 2000 starts a second to
%% 60-670 past 42 000 users binding the address alone, and to 20-40 binding port 0. The users
%% of an address take the two ways in turn: both halves fill together, the whole range is used.
-spec connect_opts() -> [gen_tcp:connect_option()].
connect_opts() ->
    case {get(?KEY), os:type()} of
        {{_, 1}, {unix, linux}} -> opts() ++ [{raw, ?SOL_IP, ?IP_BIND_ADDRESS_NO_PORT,
                                               <<1:32/native>>}];
        _ -> opts()
    end.

%% @doc Targets with `ports => {Min, Max}' (Tsung's `ports_range') get the counter their
%% connections take local ports from in turn, one per load node.
-spec port_counters(#{atom() => map()}) -> #{atom() => map()}.
port_counters(Targets) ->
    maps:map(fun(_, #{ports := _} = T) -> T#{ports_counter => atomics:new(1, [])};
                (_, T) -> T
             end, Targets).

%% @doc The options that bind a connection of `Target' to the next local port of its range
%% (`reuseaddr': a port left in TIME_WAIT by an earlier connection to another peer may be
%% bound again); none for a target without `ports'.
-spec local_port(map()) -> [gen_tcp:connect_option()].
local_port(#{ports := {Min, Max}, ports_counter := C}) ->
    [{port, Min + (atomics:add_get(C, 1, 1) - 1) rem (Max - Min + 1)}, {reuseaddr, true}];
local_port(_) -> [].

%% @doc The server's address to connect or send to: an IP address written as text is parsed
%% here, so it never reaches the resolver. With OTP's default lookup (`native') every connect
%% to "127.0.0.1" went through the `inet_gethost' port program, whose few OS processes, behind
%% thousands of connects a second on a busy host, answered `nxdomain'. Host names still go to
%% the resolver, at each connect, as the system's own lookup order says.
-spec peer(string()) -> inet:ip_address() | string().
peer(Host) ->
    case inet:parse_strict_address(Host) of
        {ok, IP} -> IP;
        {error, einval} -> Host
    end.

%% @doc An address as text, for run.json and the report.
-spec to_text(inet:ip_address()) -> binary().
to_text(A) -> list_to_binary(inet:ntoa(A)).
