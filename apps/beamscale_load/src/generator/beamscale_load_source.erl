%% @doc Source addresses of a load: the local addresses users' sockets are bound to, so that one
%% machine opens more connections to a server port than one address allows (an address reaches
%% a server port once per ephemeral port, about 28 000 times here). Users take the addresses in
%% turn (round robin, per agent). Only loopback addresses are accepted: this machine may send
%% load nowhere else (docs/scenario.md, "Many users").
%%
%% The chosen address is kept in the user's process dictionary, as the byte tally of
%% `beamscale_load_request' is: one process per user, so the kinds read it when they connect
%% without an argument of their own.
-module(beamscale_load_source).

-export([check/1, parse/1, new/1, choose/1, opts/0, peer/1, to_text/1]).
-export_type([sources/0]).

%% The addresses and a counter shared by the users of one agent (no process, no lock).
-opaque sources() :: none | {tuple(), atomics:atomics_ref()}.

-define(KEY, {?MODULE, ip}).
%% Source addresses one run may name: far above what ephemeral ports make useful (each address
%% gives about 28 000 connections per server port); more is a typo.
-define(MAX_SOURCES, 256).

%% @doc The scenario's `source_ips' checked: a non-empty list of loopback addresses as strings
%% ("127.0.0.2", "::1"); a wrong one throws `{bad, [], Message}' (`beamscale_load_scenario').
-spec check(term()) -> [inet:ip_address()].
check(L) when is_list(L), L =/= [], length(L) =< ?MAX_SOURCES ->
    Addrs = [case parse(S) of
                 {ok, A} -> A;
                 {error, Msg} -> throw({bad, [], Msg})
             end || S <- L],
    case lists:usort([tuple_size(A) || A <- Addrs]) of
        [_] -> Addrs;
        _ -> throw({bad, [], "IPv4 and IPv6 source addresses mixed: a socket of one family "
                             "cannot bind an address of the other"})
    end;
check(_) ->
    throw({bad, [], io_lib:format("expected a list of 1 to ~b loopback addresses, "
                                  "e.g. [\"127.0.0.2\", \"127.0.0.3\"]", [?MAX_SOURCES])}).

%% @doc One address from its text: 127.0.0.0/8 or ::1 only.
-spec parse(term()) -> {ok, inet:ip_address()} | {error, string()}.
parse(S) ->
    Text = case S of
               B when is_binary(B) -> unicode:characters_to_list(B);
               _ -> S
           end,
    case io_lib:printable_unicode_list(Text) andalso inet:parse_strict_address(Text) of
        {ok, {127, _, _, _} = A} -> {ok, A};
        {ok, {0, 0, 0, 0, 0, 0, 0, 1} = A} -> {ok, A};
        {ok, _} ->
            {error, Text ++ ": only loopback source addresses (127.0.0.0/8 or ::1): the "
                            "network rules of this machine forbid load to other addresses"};
        _ -> {error, io_lib:format("~0tp is not an IP address", [S], [{chars_limit, 80}])}
    end.

%% @doc The sources of an agent (`none': the system picks, as without `source_ips').
-spec new([inet:ip_address()]) -> sources().
new([]) -> none;
new(Addrs) -> {list_to_tuple(Addrs), atomics:new(1, [])}.

%% @doc Choose this user's address (the next in turn); its sockets bind it from now on.
-spec choose(sources()) -> ok.
choose(none) -> ok;
choose({Addrs, Counter}) ->
    I = atomics:add_get(Counter, 1, 1),
    put(?KEY, element((I - 1) rem tuple_size(Addrs) + 1, Addrs)),
    ok.

%% @doc The connect options that bind this user's address (none when it has none).
-spec opts() -> [gen_tcp:connect_option()].
opts() ->
    case get(?KEY) of
        undefined -> [];
        {_, _, _, _} = A -> [{ip, A}];
        A -> [inet6, {ip, A}]
    end.

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
