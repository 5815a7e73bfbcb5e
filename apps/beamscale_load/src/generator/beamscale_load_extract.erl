%% @doc Variables taken from a response (Tsung's `<dyn_variable>'): the first group of a regular
%% expression over the body, a header's value, the status. A variable whose source is absent in
%% the response is removed, so a later request that needs it counts it as unset rather than
%% sending a stale value.
-module(beamscale_load_extract).

-export([apply/3, header/2, response_text/2]).
-export_type([extract/0, response/0, mp/0]).

%% A compiled regular expression (`re:compile/2'; OTP 25 exports no type for it).
-type mp() :: {re_pattern, term(), term(), term(), term()}.

-type extract() :: {re, binary(), mp()} | {header, binary(), binary()} | {status, binary()}.
%% A response as the `http' kind returns it when asked (`respond => true'); header names as
%% received, values without surrounding blanks.
-type response() :: #{status := non_neg_integer(), headers := [{binary(), binary()}],
                      body := binary()}.

%% @doc The user's variables after taking `Extracts' from `Response'.
-spec apply([extract()], response(), beamscale_load_vars:vars()) -> beamscale_load_vars:vars().
apply(Extracts, Response, Vars) ->
    lists:foldl(fun(E, V) -> one(E, Response, V) end, Vars, Extracts).

one({re, Name, MP}, #{body := Body}, Vars) ->
    case re:run(Body, MP, [{capture, all_but_first, binary}]) of
        {match, [First | _]} -> Vars#{Name => First};
        {match, []} -> Vars#{Name => <<>>};
        nomatch -> maps:remove(Name, Vars)
    end;
one({header, Name, Header}, Response, Vars) ->
    case header(Header, Response) of
        {ok, V} -> Vars#{Name => V};
        error -> maps:remove(Name, Vars)
    end;
one({status, Name}, #{status := S}, Vars) -> Vars#{Name => integer_to_binary(S)}.

%% @doc The first value of a header (`Lower': its name in lower case).
-spec header(binary(), response()) -> {ok, binary()} | error.
header(Lower, #{headers := Headers}) ->
    case [V || {N, V} <- Headers, string:lowercase(N) =:= Lower] of
        [V | _] -> {ok, V};
        [] -> error
    end.

%% @doc The text a `<match>' looks at: the body, or with `headers' the status line and the
%% headers before it, rebuilt from what was received (HTTP/1.1, names as sent by the server).
-spec response_text(response(), body | headers) -> binary().
response_text(#{body := Body}, body) -> Body;
response_text(#{status := S, headers := Hs, body := Body}, headers) ->
    iolist_to_binary(["HTTP/1.1 ", integer_to_binary(S), "\r\n",
                      [[N, ": ", V, "\r\n"] || {N, V} <- Hs], "\r\n", Body]).
