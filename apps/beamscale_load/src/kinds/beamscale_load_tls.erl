%% @doc TLS for the stream kinds (http, raw, websocket): a target's `tls' settings checked into
%% `ssl' options, and the handshake over an open TCP socket. A user keeps the session it got
%% from each server and offers it again when it reconnects, so a reconnect that the server lets
%% resume costs an abbreviated handshake; users do not share sessions (each is a client).
-module(beamscale_load_tls).

-export([check/1, handshake/4, forget/0, format_error/1]).
-export_type([opts/0]).

%% `ssl' options, and the session key (host and port) the user remembers its session under.
-type opts() :: #{ssl := [ssl:tls_client_option()], key := term()}.

-define(KEYS, [verify, cacertfile, server_name_indication, versions, ciphers]).
-define(VERSIONS, ['tlsv1.3', 'tlsv1.2', 'tlsv1.1', tlsv1]).
%% The process-dictionary key of a user's saved sessions: a user is one process and its
%% connections come and go with errors, so the session must outlive any one connection.
-define(SESSIONS, {?MODULE, sessions}).

%% @doc `true' (verify against the system's CAs, read at the handshake) or `#{verify =>
%% verify_peer | verify_none, cacertfile => Path, server_name_indication => Name | disable}' into
%% ssl options for a server.
-spec check(true | map()) -> {ok, [ssl:tls_client_option()]} | {error, atom(), string()}.
check(true) -> check(#{});
check(M) when is_map(M) ->
    case [K || K <- maps:keys(M), not lists:member(K, ?KEYS)] of
        [K | _] -> {error, K, "unknown key (known: verify, cacertfile, server_name_indication, "
                              "versions, ciphers)"};
        [] ->
            case opts(maps:get(verify, M, verify_peer), maps:get(cacertfile, M, system),
                      maps:get(server_name_indication, M, host)) of
                {ok, Opts} -> more(M, Opts);
                Error -> Error
            end
    end;
check(_) -> {error, tls, "expected true or #{verify, cacertfile, server_name_indication}"}.

opts(V, _, _) when V =/= verify_peer, V =/= verify_none ->
    {error, verify, "expected verify_peer or verify_none"};
opts(_, Ca, _) when Ca =/= system, not is_list(Ca) ->
    {error, cacertfile, "expected the path of a PEM file"};
opts(_, _, Sni) when Sni =/= host, Sni =/= disable, not is_list(Sni) ->
    {error, server_name_indication, "expected a host name or disable"};
opts(verify_none, _, Sni) -> {ok, [{verify, verify_none} | sni(Sni)]};
opts(verify_peer, system, Sni) -> {ok, [{verify, verify_peer} | sni(Sni)]};
opts(verify_peer, Ca, Sni) ->
    {ok, [{verify, verify_peer}, {cacertfile, Ca} | sni(Sni)]}.

%% `versions => [tlsv1.2, ...]' offered, and `ciphers => "OpenSSL:names"' (Tsung's
%% `ssl_versions' and `ssl_ciphers'), each checked against what this OTP knows.
more(#{versions := Vs} = M, Opts) ->
    case is_list(Vs) andalso Vs =/= [] andalso [V || V <- Vs, not lists:member(V, ?VERSIONS)] of
        [] -> more(maps:remove(versions, M), [{versions, Vs} | Opts]);
        _ -> {error, versions, "expected a list of 'tlsv1.3', 'tlsv1.2', 'tlsv1.1' or tlsv1"}
    end;
more(#{ciphers := C} = M, Opts) when is_list(C), C =/= [] ->
    Names = string:lexemes(C, ":"),
    case [N || N <- Names, not suite(N)] of
        [] -> more(maps:remove(ciphers, M),
                   [{ciphers, [ssl:str_to_suite(N) || N <- Names]} | Opts]);
        [Bad | _] -> {error, ciphers, "unknown cipher suite " ++ Bad}
    end;
more(#{ciphers := _}, _Opts) -> {error, ciphers, "expected \"NAME:NAME...\" (OpenSSL's names)"};
more(_M, Opts) -> {ok, Opts}.

suite(Name) ->
    try ssl:str_to_suite(Name) of
        #{} -> true;
        _ -> false
    catch _:_ -> false
    end.

sni(host) -> [];
sni(disable) -> [{server_name_indication, disable}];
sni(Name) -> [{server_name_indication, Name}].

%% @doc The TLS handshake over the TCP socket `S' connected to `Host:Port', offering the
%% session this user saved for that server. The socket is armed as beamscale_load_reader wants.
-spec handshake(gen_tcp:socket(), {string(), inet:port_number()}, [ssl:tls_client_option()],
                timeout()) -> {ok, ssl:sslsocket()} | {error, {?MODULE, term()}}.
handshake(S, {Host, _} = Server, Opts, Timeout) ->
    %% Started here, not by the app: only runs with TLS targets need it. A no-op once started.
    {ok, _} = application:ensure_all_started(ssl),
    Saved = maps:get(Server, sessions(), undefined),
    Reuse = case Saved of
                undefined -> [{reuse_sessions, save}];
                Id -> [{reuse_session, Id}, {reuse_sessions, save}]
            end,
    Sni = [{server_name_indication, Host} || not lists:keymember(server_name_indication, 1, Opts),
                                             not is_ip(Host)],
    %% TLS 1.2: its session ids resume per user; TLS 1.3 tickets would need a round trip after
    %% the handshake before the first request could go, which a request-timed load cannot hide.
    %% Failed handshakes are counted by reason; ssl's own log line per alert would flood.
    Fixed = [{versions, ['tlsv1.2']}, beamscale_load_reader:active(), {log_level, error}],
    case ssl:connect(S, Sni ++ trusted(Opts) ++ Reuse ++ Fixed, Timeout) of
        {ok, T} ->
            ok = beamscale_load_transport:held(T, beamscale_load_transport_tls),
            save(T, Server),
            {ok, T};
        {error, Reason} -> {error, {?MODULE, {handshake, Reason}}}
    end.

%% Verifying with no CA file given trusts the system's CAs: read where the handshake runs (the
%% load node's host), once per node (`public_key' keeps them), not when the scenario is checked.
trusted(Opts) ->
    Given = lists:keymember(cacertfile, 1, Opts) orelse lists:keymember(cacerts, 1, Opts),
    case lists:member({verify, verify_peer}, Opts) andalso not Given of
        true -> [{cacerts, public_key:cacerts_get()} | Opts];
        false -> Opts
    end.

is_ip(Host) -> element(1, inet:parse_address(Host)) =:= ok.

%% @doc Forget the sessions this user saved: its next handshakes are full ones (a client
%% certificate given midway is then presented, not skipped by a resumption).
-spec forget() -> ok.
forget() ->
    _ = erase(?SESSIONS),
    ok.

sessions() ->
    case get(?SESSIONS) of
        undefined -> #{};
        M -> M
    end.

save(T, Server) ->
    case ssl:connection_information(T, [session_id, session_data]) of
        {ok, [{session_id, Id}, {session_data, Data}]} ->
            put(?SESSIONS, (sessions())#{Server => {Id, Data}});
        _ -> ok
    end,
    ok.

%% @doc The text of a TLS error.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({handshake, Reason}) ->
    ["TLS handshake: ", beamscale_load_reasons:ssl_text(Reason)].
