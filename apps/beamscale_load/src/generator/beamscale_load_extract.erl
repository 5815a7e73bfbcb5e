%% @doc Variables taken from a response (Tsung's `<dyn_variable>'): the first group of a regular
%% expression over the body, a header's value or a parameter of it, the status, a JSONPath
%% (`beamscale_load_jsonpath') or XPath (`beamscale_load_xpath') over the body. A variable
%% whose source is absent in
%% the response is removed, so a later request that needs it counts it as unset rather than
%% sending a stale value.
-module(beamscale_load_extract).

-export([apply/3, run/3, header/2, header_param/2, response_text/2]).
-compile({no_auto_import, [apply/3]}).

%% `key="quoted"' or `key=token' in an authentication header (RFC 7235 auth-param).
-define(PARAM_RE, <<"([A-Za-z0-9_-]+)\\s*=\\s*(?:\"((?:[^\"\\\\]|\\\\.)*)\"|([^\\s,\"]*))">>).
-export_type([extract/0, response/0, mp/0]).

%% A compiled regular expression (`re:compile/2'; OTP 25 exports no type for it).
-type mp() :: {re_pattern, term(), term(), term(), term()}.

-type extract() :: {re, binary(), mp()} | {re_all, binary(), mp()} | {header, binary(), binary()}
                 | {header, binary(), binary(), binary()} | {status, binary()}
                 | {jsonpath, binary(), beamscale_load_jsonpath:path()}
                 | {xpath, binary(), beamscale_load_xpath:xpath()}.
%% A response as a kind returns it when asked (`respond => true'); header names as received,
%% values without surrounding blanks. A WebSocket message's reply has a body only.
-type response() :: #{status => non_neg_integer(), headers => [{binary(), binary()}],
                      body := binary()}.

%% @doc The user's variables after taking `Extracts' from `Response'.
-spec apply([extract()], response(), beamscale_load_vars:vars()) -> beamscale_load_vars:vars().
apply([E | Extracts], Response, Vars) -> apply(Extracts, Response, one(E, Response, Vars));
apply([], _Response, Vars) -> Vars.

one({re, Name, MP}, #{body := Body}, Vars) ->
    %% As run/3, without its call (the hot path of a dynamic request; docs/scenario.md).
    Found = try re:run(Body, MP, [{capture, all_but_first, binary}])
            catch error:badarg -> nomatch
            end,
    case Found of
        {match, [First | _]} -> Vars#{Name => First};
        {match, []} -> Vars#{Name => <<>>};
        nomatch -> maps:remove(Name, Vars)
    end;
%% Every match's first group: a list variable (`{list, Name}'), its first value in `Name'.
one({re_all, Name, MP}, #{body := Body}, Vars) ->
    Found = try re:run(Body, MP, [global, {capture, all_but_first, binary}])
            catch error:badarg -> nomatch
            end,
    case Found of
        {match, Ms} -> list(Name, [case M of [G | _] -> G; [] -> <<>> end || M <- Ms], Vars);
        nomatch -> unset_list(Name, Vars)
    end;
one({header, Name, Header}, Response, Vars) ->
    case header(Header, Response) of
        {ok, V} -> Vars#{Name => V};
        error -> maps:remove(Name, Vars)
    end;
%% A parameter of a header such as `WWW-Authenticate: Digest realm="r", nonce="n"' (Tsung's
%% `header="www-authenticate/nonce"'); absent, the variable keeps its value, as Tsung documents
%% for `authentication-info/nextnonce'.
one({header, Name, Header, Param}, Response, Vars) ->
    case header(Header, Response) of
        {ok, V} ->
            case header_param(Param, V) of
                {ok, P} -> Vars#{Name => P};
                error -> Vars
            end;
        error -> Vars
    end;
one({status, Name}, #{status := S}, Vars) -> Vars#{Name => integer_to_binary(S)};
one({status, Name}, _, Vars) -> maps:remove(Name, Vars);
%% Several nodes selected: a list variable too (XPath's as well).
one({jsonpath, Name, Path}, #{body := Body}, Vars) ->
    list(Name, beamscale_load_jsonpath:values(Path, Body), Vars);
one({xpath, Name, X}, #{body := Body}, Vars) ->
    list(Name, beamscale_load_xpath:values(X, Body), Vars).

%% A reply's list is cut at 1000 values, as JSONPath's.
list(Name, {ok, Vs}, Vars) -> list(Name, Vs, Vars);
list(Name, error, Vars) -> unset_list(Name, Vars);
list(Name, [First | _] = Vs, Vars) ->
    Vars#{Name => First, {list, Name} => lists:sublist(Vs, 1000)}.

unset_list(Name, Vars) -> maps:remove({list, Name}, maps:remove(Name, Vars)).

%% @doc `re:run/3' of a scenario's expression: one in UTF-8 mode (it holds a character beyond
%% ASCII) does not match a response that is not valid UTF-8 (`re' raises badarg).
-spec run(binary(), mp(), [term()]) -> {match, [binary()]} | match | nomatch.
run(Subject, MP, Opts) ->
    try re:run(Subject, MP, Opts)
    catch error:badarg -> nomatch
    end.


%% @doc A parameter of an authentication header: `Scheme k=v, k2="v 2"' (`Lower' in lower case).
-spec header_param(binary(), binary()) -> {ok, binary()} | error.
header_param(Lower, Value) ->
    case re:run(Value, ?PARAM_RE, [global, {capture, all_but_first, binary}]) of
        {match, Found} ->
            %% PCRE leaves out a trailing group that did not take part: a quoted value.
            case [unquote(V) || [K | V] <- Found, string:lowercase(K) =:= Lower] of
                [V | _] -> {ok, V};
                [] -> error
            end;
        nomatch -> error
    end.

unquote([Quoted]) -> binary:replace(Quoted, <<"\\">>, <<>>, [global]);
unquote([_, Token]) -> Token.

%% @doc The first value of a header (`Lower': its name in lower case).
-spec header(binary(), response()) -> {ok, binary()} | error.
header(Lower, #{headers := Headers}) ->
    case [V || {N, V} <- Headers, string:lowercase(N) =:= Lower] of
        [V | _] -> {ok, V};
        [] -> error
    end;
header(_Lower, _NoHeaders) -> error.

%% @doc The text a `<match>' looks at: the body, or with `headers' the status line and the
%% headers before it, rebuilt from what was received (HTTP/1.1, names as sent by the server);
%% a response without them (a WebSocket reply) is its body.
-spec response_text(response(), body | headers) -> binary().
response_text(#{status := S, headers := Hs, body := Body}, headers) ->
    iolist_to_binary(["HTTP/1.1 ", integer_to_binary(S), "\r\n",
                      [[N, ": ", V, "\r\n"] || {N, V} <- Hs], "\r\n", Body]);
response_text(#{body := Body}, _) -> Body.
