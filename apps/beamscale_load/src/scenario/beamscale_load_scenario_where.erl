%% @doc Where a scenario's load goes, checked: its targets (a node, a node to start, or a server
%% address, over TLS or udp) and its load nodes (a count here, or hosts reached by ssh). Part of
%% `beamscale_load_scenario''s checks: a wrong value throws `{bad, Path, Message}' for it to name
%% with its file and line.
-module(beamscale_load_scenario_where).

-export([target/1, load_nodes/1, ssh_host/1, socket/1]).

-define(HOST_KEYS, "args, user, erl, nodes, weight, source_ips").
%% Load nodes per host: each is an emulator; more than this on one host is a typing error.
-define(MAX_HOST_NODES, 256).
%% The largest `max_reply_bytes': 4 GiB, past which one user's reply alone is a machine's memory.
-define(MAX_REPLY, 1 bsl 32).

%% @doc A target, with defaults filled in.
-spec target(term()) -> beamscale_load_scenario:target().
target(#{node := Node} = T) when is_atom(Node) ->
    only(T, [node, cookie]),
    case maps:get(cookie, T, undefined) of
        C when is_atom(C) -> maps:filter(fun(_, X) -> X =/= undefined end, T);
        _ -> bad([cookie], "expected an atom")
    end;
target(#{start := S} = T) when is_map(S) ->
    only(T, [start]),
    only(S, [erl, flags, code_path, init]),
    Start = maps:merge(#{erl => "erl", flags => "", code_path => []}, S),
    [bad([start, K], "expected a string") || K <- [erl, flags], not is_string(maps:get(K, Start))],
    [bad([start, code_path], "expected a list of directories")
     || not lists:all(fun is_string/1, maps:get(code_path, Start))],
    case Start of
        #{init := {M, F, A}} when is_atom(M), is_atom(F), is_list(A) -> ok;
        #{init := _} -> bad([start, init], "expected {Module, Function, Args}");
        _ -> ok
    end,
    #{start => Start};
target(#{address := A} = T) ->
    only(T, [address, tls, transport, max_reply_bytes, connect_timeout_ms, recbuf, sndbuf,
             max_retries, retry_timeout_ms, ports]),
    Tcp = case maps:get(transport, T, tcp) of
              tcp -> #{};
              udp when is_map_key(tls, T) -> bad([tls], "TLS over udp is not supported");
              udp -> #{transport => udp};
              _ -> bad([transport], "expected tcp or udp")
          end,
    case address(A) of
        {ok, Host, Port} ->
            maps:merge(Tcp#{host => Host, port => Port},
                       maps:merge(maps:merge(tls(T), max(T)), socket(T)));
        error -> bad([address], "expected \"host:port\", \"http://host[:port]\" or "
                                "\"https://host[:port]\"")
    end;
%% A directory for the fs kind (beamscale_load_fs): absolute, so every load node reads it alike.
target(#{dir := D} = T) ->
    only(T, [dir, max_reply_bytes]),
    [bad([dir], "expected a directory's path") || not is_string(D) orelse D =:= ""],
    maps:merge(#{dir => filename:absname(D)}, max(T));
target(_) ->
    bad([], "expected #{node => Node}, #{start => #{...}}, #{address => \"host:port\"} or "
            "#{dir => Path}").

%% `tls => true | #{...}' (beamscale_load_tls), or an https:// address (TLS, verified).
tls(#{tls := Tls}) ->
    case beamscale_load_tls:check(Tls) of
        {ok, Opts} -> #{tls => Opts};
        {error, tls, Msg} -> bad([tls], Msg);
        {error, K, Msg} -> bad([tls, K], Msg)
    end;
tls(#{address := "https://" ++ _}) -> tls(#{tls => true});
tls(_) -> #{}.

%% @doc Tsung's `connect_timeout', `tcp_rcv_buffer' and `tcp_snd_buffer' options, per target:
%% `connect_timeout_ms' (default 5000: connect and TLS handshake each), `recbuf' and `sndbuf'
%% (the sockets' kernel buffers, bytes); `max_retries', `retry_timeout_ms' and `ports'.
-spec socket(map()) -> map().
socket(T) ->
    [bad([K], "expected milliseconds from 1 to 600000")
     || K <- [connect_timeout_ms], is_map_key(K, T),
        not (is_integer(maps:get(K, T)) andalso maps:get(K, T) > 0
             andalso maps:get(K, T) =< 600000)],
    [bad([K], "expected bytes from 1 to 1073741824")
     || K <- [recbuf, sndbuf], is_map_key(K, T),
        not (is_integer(maps:get(K, T)) andalso maps:get(K, T) > 0
             andalso maps:get(K, T) =< 1 bsl 30)],
    [bad([max_retries], "expected 0 to 100") || is_map_key(max_retries, T),
                                                not lists:member(maps:get(max_retries, T),
                                                                 lists:seq(0, 100))],
    [bad([retry_timeout_ms], "expected milliseconds from 1 to 60000")
     || is_map_key(retry_timeout_ms, T),
        not lists:member(maps:get(retry_timeout_ms, T), lists:seq(1, 60000))],
    [bad([ports], "expected {Min, Max}, 1024 < Min =< Max =< 65535")
     || is_map_key(ports, T),
        not case maps:get(ports, T) of
                {A, B} when is_integer(A), is_integer(B) -> 1024 < A andalso A =< B
                                                                andalso B =< 65535;
                _ -> false
            end],
    maps:with([connect_timeout_ms, recbuf, sndbuf, max_retries, retry_timeout_ms, ports], T).

%% `max_reply_bytes => N': the most bytes one request may read (beamscale_load_reader).
max(#{max_reply_bytes := N}) when is_integer(N), N > 0, N =< ?MAX_REPLY -> #{max_reply_bytes => N};
max(#{max_reply_bytes := _}) ->
    bad([max_reply_bytes], io_lib:format("expected a number of bytes from 1 to ~b", [?MAX_REPLY]));
max(_) -> #{}.

%% @private "host:port" with a port number; a URL too, "http[s]://host[:port][/]" (the port its
%% scheme's by default; `tls/2' reads the scheme). An IPv6 address may be bracketed, as in a
%% URL ("[::1]:8080"): the host is then the address without its brackets.
address("https://" ++ A) -> url(A, 443);
address("http://" ++ A) -> url(A, 80);
address("[" ++ A) ->
    case string:split(A, "]") of
        [Host, ":" ++ P] when Host =/= "" ->
            case address(Host ++ ":" ++ P) of
                {ok, _, Port} -> {ok, Host, Port};
                error -> error
            end;
        _ -> error
    end;
address(A) when is_list(A) ->
    case string:split(A, ":", trailing) of
        [Host, P] when Host =/= "" ->
            try list_to_integer(P) of
                Port when Port > 0, Port < 65536 -> {ok, Host, Port};
                _ -> error
            catch error:badarg -> error
            end;
        _ -> error
    end;
address(_) -> error.

url(A, Default) ->
    HostPort = string:trim(A, trailing, "/"),
    case {HostPort, lists:reverse(HostPort)} of
        {"[" ++ _, "]" ++ _} -> address(HostPort ++ ":" ++ integer_to_list(Default));
        _ -> case lists:member($:, HostPort) orelse HostPort =:= ""
                      orelse lists:member($/, HostPort) of
                 true -> address(HostPort);
                 false -> {ok, HostPort, Default}
             end
    end.

%% @doc The load nodes: how many here, or the ssh hosts.
-spec load_nodes(term()) -> non_neg_integer() | [beamscale_load_scenario:ssh_host()].
load_nodes(N) when is_integer(N), N >= 0 -> N;
load_nodes([_ | _] = Hosts) -> [ssh_host(H) || H <- Hosts];
load_nodes(_) ->
    bad([], "expected a number of load nodes (0: none, users run in beamscale) or a list of "
            "hosts reached by ssh: \"HOST\" or {\"HOST\", #{args => [...], user => \"U\", "
            "erl => \"PATH\", nodes => N, weight => W, source_ips => [...]}}").

%% @doc A host reached by ssh: its ssh options, login and erl, how many load nodes it runs (`nodes',
%% Tsung's `cpu'), its share of the arrivals (`weight', relative to the other hosts') and the
%% source addresses of its users (`source_ips', in place of the scenario's).
-spec ssh_host(term()) -> beamscale_load_scenario:ssh_host().
ssh_host({Host, Opts}) when is_map(Opts) ->
    is_text(Host) orelse bad([], "expected a host name, not " ++ io_lib:format("~0tp", [Host])),
    [bad([], io_lib:format("~ts: unknown key ~0tp (known: ~s)", [Host, K, ?HOST_KEYS]))
     || K <- maps:keys(Opts),
        not lists:member(K, [args, user, erl, nodes, weight, source_ips])],
    Args = maps:get(args, Opts, []),
    is_list(Args) andalso lists:all(fun is_text/1, Args)
        orelse bad([], Host ++ ": args: expected a list of strings (ssh options)"),
    [bad([], io_lib:format("~ts: ~s: expected a string not starting with -", [Host, K]))
     || K <- [user, erl], is_map_key(K, Opts),
        not is_text(maps:get(K, Opts)) orelse hd(maps:get(K, Opts)) =:= $-],
    Nodes = maps:get(nodes, Opts, 1),
    is_integer(Nodes) andalso Nodes > 0 andalso Nodes =< ?MAX_HOST_NODES
        orelse bad([], io_lib:format("~ts: nodes: expected 1 to ~b load nodes", [Host,
                                                                               ?MAX_HOST_NODES])),
    Weight = maps:get(weight, Opts, 1),
    is_number(Weight) andalso Weight > 0
        orelse bad([], Host ++ ": weight: expected a positive number (its share of arrivals)"),
    Sources = [{source_ips, sources(Host, S)} || S <- [maps:get(source_ips, Opts, none)],
                                                 S =/= none],
    (maps:merge(maps:with([user, erl], Opts), maps:from_list(Sources)))#{
      host => Host, args => Args, nodes => Nodes, weight => Weight};
ssh_host(Host) -> ssh_host({Host, #{}}).

%% A host's own source addresses (as the scenario's `source_ips'), checked on its load nodes.
sources(Host, S) ->
    try beamscale_load_source:check(S)
    catch throw:{bad, [], Msg} -> bad([], [Host, ": source_ips: ", Msg])
    end.

is_text(S) -> io_lib:printable_unicode_list(S) andalso S =/= "".

-spec bad([term()], iodata()) -> no_return().
bad(Path, Msg) -> throw({bad, Path, Msg}).

only(Map, Keys) ->
    [bad([K], "unknown key (known: " ++ lists:join(", ", [atom_to_list(X) || X <- Keys]) ++ ")")
     || K <- maps:keys(Map), not lists:member(K, Keys)],
    ok.

is_string(S) -> io_lib:printable_unicode_list(S) orelse S =:= [].
