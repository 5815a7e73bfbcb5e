%% @doc A small HTTP/1.1 server for the tests, on 127.0.0.1 over TCP or TLS, that really checks
%% what nginx cannot (Debian's nginx has no digest module): HTTP digest authentication (RFC 7616,
%% MD5, qop=auth) on `/digest' and OAuth 1.0 HMAC-SHA1 signatures (RFC 5849) on `/token' and
%% `/echo'. Verification is written here from the RFCs, apart from the code under test. It counts
%% each outcome in a public ets table the test reads.
-module(beamscale_load_auth_server).

-export([start/1, stop/1, counts/1, port/1]).

-define(USER, <<"user">>).
-define(PASSWD, <<"passwd">>).
-define(REALM, <<"beamscale test">>).
-define(CONSUMER, {<<"key">>, <<"secret">>}).
%% A test request is answered within milliseconds; a silent client is dropped after this.
-define(RECV_TIMEOUT_MS, 10000).

%% @doc Start listening (`tcp' or `tls'); returns the server's state to pass to the others.
-spec start(tcp | tls) -> map().
start(Transport) ->
    Tab = ets:new(auth_server, [public, set]),
    {Mod, Listen} = listen(Transport),
    {ok, {_, Port}} = case Mod of
                          gen_tcp -> inet:sockname(Listen);
                          ssl -> ssl:sockname(Listen)
                      end,
    Pid = spawn(fun() -> accept(Mod, Listen, Tab) end),
    ok = case Mod of
             gen_tcp -> gen_tcp:controlling_process(Listen, Pid);
             ssl -> ssl:controlling_process(Listen, Pid)
         end,
    #{pid => Pid, port => Port, tab => Tab}.

-spec stop(map()) -> ok.
stop(#{pid := Pid}) -> exit(Pid, kill), ok.

-spec port(map()) -> inet:port_number().
port(#{port := P}) -> P.

%% @doc The outcomes so far: challenge, digest_ok, digest_bad, oauth_ok, oauth_bad,
%% oauth_unknown_token.
-spec counts(map()) -> map().
counts(#{tab := Tab}) -> maps:from_list([{K, V} || {{count, K}, V} <- ets:tab2list(Tab)]).

listen(tcp) ->
    {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}}, {active, false},
                                 {reuseaddr, true}]),
    {gen_tcp, L};
listen(tls) ->
    {ok, _} = application:ensure_all_started(ssl),
    #{server_config := Conf} =
        public_key:pkix_test_data(#{server_chain => #{root => [], peer => []},
                                    client_chain => #{root => [], peer => []}}),
    {ok, L} = ssl:listen(0, [binary, {ip, {127, 0, 0, 1}}, {active, false},
                             {reuseaddr, true} | Conf]),
    {ssl, L}.

accept(Mod, Listen, Tab) ->
    case case Mod of
             gen_tcp -> gen_tcp:accept(Listen);
             ssl -> ssl:transport_accept(Listen)
         end of
        {ok, S} ->
            Pid = spawn(fun() -> receive go -> conn(Mod, handshake(Mod, S), Tab) end end),
            ok = Mod:controlling_process(S, Pid),
            Pid ! go,
            accept(Mod, Listen, Tab);
        {error, _} -> ok
    end.

handshake(gen_tcp, S) -> S;
handshake(ssl, S) ->
    {ok, S1} = ssl:handshake(S, ?RECV_TIMEOUT_MS),
    S1.

setopts(gen_tcp, S, O) -> inet:setopts(S, O);
setopts(ssl, S, O) -> ssl:setopts(S, O).

conn(Mod, S, Tab) ->
    ok = setopts(Mod, S, [{packet, http_bin}]),
    case Mod:recv(S, 0, ?RECV_TIMEOUT_MS) of
        {ok, {http_request, M, {abs_path, Path}, _}} ->
            Hs = headers(Mod, S, []),
            ok = setopts(Mod, S, [{packet, raw}]),
            Len = binary_to_integer(proplists:get_value(<<"content-length">>, Hs, <<"0">>)),
            _ = Len > 0 andalso Mod:recv(S, Len, ?RECV_TIMEOUT_MS),
            Method = string:uppercase(if is_atom(M) -> atom_to_binary(M); true -> M end),
            {Status, RHs, Body} = handle(Method, Path, Hs, Tab),
            ok = Mod:send(S, [<<"HTTP/1.1 ">>, integer_to_binary(Status), <<" X\r\n">>,
                              [[N, <<": ">>, V, <<"\r\n">>] || {N, V} <- RHs],
                              <<"Content-Length: ">>, integer_to_binary(byte_size(Body)),
                              <<"\r\n\r\n">>, Body]),
            conn(Mod, S, Tab);
        _ -> Mod:close(S)
    end.

headers(Mod, S, Acc) ->
    case Mod:recv(S, 0, ?RECV_TIMEOUT_MS) of
        {ok, {http_header, _, N, _, V}} ->
            Name = string:lowercase(if is_atom(N) -> atom_to_binary(N); true -> N end),
            headers(Mod, S, [{Name, V} | Acc]);
        {ok, http_eoh} -> Acc
    end.

count(Tab, K) -> ets:update_counter(Tab, {count, K}, 1, {{count, K}, 0}).

fresh() -> binary:encode_hex(crypto:strong_rand_bytes(8)).

%% ---- digest ----

handle(Method, <<"/digest">> = Uri, Hs, Tab) ->
    case proplists:get_value(<<"authorization">>, Hs) of
        <<"Digest ", Params/binary>> ->
            P = auth_params(Params),
            case digest_ok(Method, Uri, P, Tab) of
                true ->
                    count(Tab, digest_ok),
                    Next = fresh(),
                    ets:insert(Tab, {{nonce, Next}}),
                    {200, [{<<"Authentication-Info">>, <<"nextnonce=\"", Next/binary, "\"">>}],
                     <<"ok">>};
                false -> count(Tab, digest_bad), challenge(Tab)
            end;
        _ -> count(Tab, challenge), challenge(Tab)
    end;
handle(Method, Path, Hs, Tab) -> oauth(Method, Path, Hs, Tab).

challenge(Tab) ->
    N = fresh(),
    ets:insert(Tab, {{nonce, N}}),
    {401, [{<<"WWW-Authenticate">>, <<"Digest realm=\"", ?REALM/binary, "\", nonce=\"",
                                       N/binary, "\", qop=\"auth\", algorithm=MD5">>}], <<>>}.

digest_ok(Method, Uri, P, Tab) ->
    Get = fun(K) -> maps:get(K, P, <<>>) end,
    Ha1 = md5([?USER, ":", ?REALM, ":", ?PASSWD]),
    Ha2 = md5([Method, ":", Uri]),
    Want = md5([Ha1, ":", Get(<<"nonce">>), ":", Get(<<"nc">>), ":", Get(<<"cnonce">>),
                ":auth:", Ha2]),
    Get(<<"username">>) =:= ?USER andalso Get(<<"realm">>) =:= ?REALM
        andalso Get(<<"uri">>) =:= Uri andalso Get(<<"qop">>) =:= <<"auth">>
        andalso ets:member(Tab, {nonce, Get(<<"nonce">>)}) andalso Get(<<"response">>) =:= Want.

md5(Io) -> string:lowercase(binary:encode_hex(crypto:hash(md5, Io))).

auth_params(B) ->
    {match, Ps} = re:run(B, <<"([a-z_]+)=(?:\"([^\"]*)\"|([^,\\s]*))">>,
                         [global, {capture, all_but_first, binary}]),
    maps:from_list([case P of
                        [K, V] -> {K, V};
                        [K, <<>>, V] -> {K, V}
                    end || P <- Ps]).

%% ---- OAuth 1.0 ----

oauth(Method, Path, Hs, Tab) ->
    {Base, Query} = case binary:split(Path, <<"?">>) of
                        [B, Q] -> {B, Q};
                        [B] -> {B, <<>>}
                    end,
    case proplists:get_value(<<"authorization">>, Hs) of
        <<"OAuth ", Params/binary>> ->
            P = maps:map(fun(_, V) -> uri_string:percent_decode(V) end, auth_params(Params)),
            Host = proplists:get_value(<<"host">>, Hs),
            oauth_check(Method, Base, {Host, Query}, P, Tab);
        _ -> count(Tab, oauth_bad), {401, [], <<"no OAuth">>}
    end.

oauth_check(Method, Path, {Host, Query}, P, Tab) ->
    {Key, ConsumerSecret} = ?CONSUMER,
    Token = maps:get(<<"oauth_token">>, P, <<>>),
    TokenSecret = case Token of
                      <<>> -> {ok, <<>>};
                      _ -> case ets:lookup(Tab, {token, Token}) of
                               [{_, S}] -> {ok, S};
                               [] -> unknown
                           end
                  end,
    case TokenSecret of
        unknown -> count(Tab, oauth_unknown_token), {401, [], <<"unknown token">>};
        {ok, TS} ->
            Params = [{K, V} || {K, V} <- maps:to_list(P), K =/= <<"oauth_signature">>]
                ++ [list_to_tuple(binary:split(Q, <<"=">>))
                    || Q <- binary:split(Query, <<"&">>, [global]), Q =/= <<>>],
            Norm = lists:join("&", [[K, "=", V] || {K, V} <- lists:sort([{pct(K), pct(V)}
                                                                        || {K, V} <- Params])]),
            BaseString = [Method, "&", pct(<<"http://", Host/binary, Path/binary>>), "&",
                          pct(iolist_to_binary(Norm))],
            Sig = base64:encode(crypto:mac(hmac, sha, [pct(ConsumerSecret), "&", pct(TS)],
                                           BaseString)),
            case maps:get(<<"oauth_consumer_key">>, P, <<>>) =:= Key andalso
                maps:get(<<"oauth_signature">>, P, <<>>) =:= Sig of
                true -> count(Tab, oauth_ok), oauth_ok(Path, Tab);
                false -> count(Tab, oauth_bad), {401, [], <<"bad signature">>}
            end
    end.

oauth_ok(<<"/token", _/binary>>, Tab) ->
    {T, S} = {<<"T", (fresh())/binary>>, <<"S", (fresh())/binary>>},
    ets:insert(Tab, {{token, T}, S}),
    {200, [{<<"Content-Type">>, <<"text/xml">>}],
     <<"<?xml version=\"1.0\"?><tokenCreationResponse><tokenInfo><token>", T/binary,
       "</token><tokenSecret>", S/binary, "</tokenSecret></tokenInfo></tokenCreationResponse>">>};
oauth_ok(_, _Tab) -> {200, [], <<"echo">>}.

pct(B) ->
    << <<(if C >= $a, C =< $z; C >= $A, C =< $Z; C >= $0, C =< $9; C =:= $-; C =:= $.;
             C =:= $_; C =:= $~ -> <<C>>;
             true -> iolist_to_binary(io_lib:format("%~2.16.0B", [C]))
          end)/binary>> || <<C>> <= B >>.
