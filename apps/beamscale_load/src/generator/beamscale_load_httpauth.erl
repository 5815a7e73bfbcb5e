%% @doc The `Authorization' header of HTTP digest authentication (RFC 7616 and 2617, MD5 with
%% `qop=auth') and of OAuth 1.0 request signing (RFC 5849, HMAC-SHA1), from a request's method,
%% path and target and the user's values (pure apart from the fresh client nonce and the clock).
-module(beamscale_load_httpauth).

-export([digest/3, oauth/3, params/1, encode/1]).

%% Client nonces: 8 random bytes in hex, fresh per request (as RFC 7616 asks).
-define(CNONCE_BYTES, 8).
-define(HEX, {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $a, $b, $c, $d, $e, $f}).

%% @doc The digest `Authorization' value. `A' holds user, passwd, realm, nonce and optionally
%% opaque, nc (default 00000001) and cnonce (default fresh).
-spec digest(#{atom() => binary()}, binary(), binary()) -> string().
digest(A, Method, Uri) ->
    #{user := U, passwd := P, realm := Realm, nonce := Nonce} = A,
    Nc = nonempty(maps:get(nc, A, <<>>), <<"00000001">>),
    Cnonce = nonempty(maps:get(cnonce, A, <<>>),
                      hex(crypto:strong_rand_bytes(?CNONCE_BYTES))),
    Ha1 = md5([U, ":", Realm, ":", P]),
    Ha2 = md5([Method, ":", Uri]),
    Resp = md5([Ha1, ":", Nonce, ":", Nc, ":", Cnonce, ":auth:", Ha2]),
    Opaque = case maps:get(opaque, A, <<>>) of
                 <<>> -> [];
                 O -> [", opaque=\"", O, "\""]
             end,
    binary_to_list(iolist_to_binary(
                     ["Digest username=\"", U, "\", realm=\"", Realm, "\", nonce=\"", Nonce,
                      "\", uri=\"", Uri, "\", algorithm=MD5, qop=auth, nc=", Nc,
                      ", cnonce=\"", Cnonce, "\", response=\"", Resp, "\"", Opaque])).

nonempty(<<>>, Default) -> Default;
nonempty(V, _) -> V.

md5(Io) -> hex(crypto:hash(md5, Io)).

%% Lower-case hex (OTP 25's binary:encode_hex/1 writes upper case; digest wants lower).
hex(Bin) -> << <<(element(N + 1, ?HEX))>> || <<N:4>> <= Bin >>.

%% @doc The OAuth 1.0 `Authorization' value (HMAC-SHA1) of a request to `BaseUri'
%% (scheme://host[:port]/path, no query) whose query parameters are `Query'. `O' holds
%% consumer_key, consumer_secret and optionally access_token and access_token_secret.
-spec oauth(#{atom() => binary()}, binary(), {binary(), [{binary(), binary()}]}) -> string().
oauth(O, Method, {BaseUri, Query}) ->
    Token = maps:get(access_token, O, <<>>),
    Oauth = [{<<"oauth_consumer_key">>, maps:get(consumer_key, O)},
             {<<"oauth_nonce">>, binary:encode_hex(crypto:strong_rand_bytes(?CNONCE_BYTES))},
             {<<"oauth_signature_method">>, <<"HMAC-SHA1">>},
             {<<"oauth_timestamp">>, integer_to_binary(erlang:system_time(second))},
             {<<"oauth_version">>, <<"1.0">>}]
        ++ [{<<"oauth_token">>, Token} || Token =/= <<>>],
    Base = base_string(Method, BaseUri, Query ++ Oauth),
    Key = [encode(maps:get(consumer_secret, O)), "&",
           encode(maps:get(access_token_secret, O, <<>>))],
    Sig = base64:encode(crypto:mac(hmac, sha, Key, Base)),
    binary_to_list(iolist_to_binary(
                     ["OAuth ", lists:join(", ", [[K, "=\"", encode(V), "\""]
                                                  || {K, V} <- Oauth ++
                                                         [{<<"oauth_signature">>, Sig}]])])).

base_string(Method, BaseUri, Params) ->
    Norm = lists:join("&", [[K, "=", V] || {K, V} <- lists:sort([{encode(K), encode(V)}
                                                                 || {K, V} <- Params])]),
    iolist_to_binary([string:uppercase(Method), "&", encode(BaseUri), "&",
                      encode(iolist_to_binary(Norm))]).

%% @doc The parameters of a query string (`a=1&b=2'), percent-decoded.
-spec params(binary()) -> [{binary(), binary()}].
params(<<>>) -> [];
params(Q) ->
    [case binary:split(P, <<"=">>) of
         [K, V] -> {uri_string:percent_decode(K), uri_string:percent_decode(V)};
         [K] -> {uri_string:percent_decode(K), <<>>}
     end || P <- binary:split(Q, <<"&">>, [global]), P =/= <<>>].

%% @doc RFC 5849's percent-encoding: everything but ALPHA, DIGIT, `-._~'.
-spec encode(iodata()) -> binary().
encode(V) ->
    << <<(enc(C))/binary>> || <<C>> <= iolist_to_binary(V) >>.

enc(C) when C >= $a, C =< $z; C >= $A, C =< $Z; C >= $0, C =< $9; C =:= $-; C =:= $.;
            C =:= $_; C =:= $~ -> <<C>>;
enc(C) -> list_to_binary(io_lib:format("%~2.16.0B", [C])).
