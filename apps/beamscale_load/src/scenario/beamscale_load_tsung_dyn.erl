%% @doc Tsung's dynamic scenarios in XML, translated (pure) into the terms format's dynamic steps
%% and request keys (`beamscale_load_scenario_dyn' checks them): `<setdynvars>', `<if>',
%% `<repeat>' with `<while>'/`<until>', `<for var>', and in a `<request>' its `<dyn_variable>'s,
%% `<match>'es, `<add_cookie>'s and `<www_authenticate>'. Errors are thrown at the element's
%% line as `beamscale_load_tsung_dom' throws them; names and values stay text.
-module(beamscale_load_tsung_dyn).

-export([step/3, request_keys/3, files/2, step_names/0, http_children/0, calls/3, userid/2]).

-include_lib("xmerl/include/xmerl.hrl").

%% Tsung's default bound of a `<repeat>'.
-define(DEFAULT_MAX_REPEAT, 20).
%% A `<for>' or `<repeat>' past this many rounds is a typo: refused when the file is read.
-define(MAX_REPEATS, 1000000).
-import(beamscale_load_tsung_dom, [children/3, check_attrs/2, attr/2, attr/3, req/3, integer/3,
                                   positive_integer/3, non_negative/3, fail/4]).

%% Tsung's built-in callbacks that number users: the user's number here.
-define(UNIQUE_ID, ["ts_user_server:get_unique_id", "ts_user_server:get_really_unique_id"]).

%% @doc The elements allowed inside `<http>'.
-spec http_children() -> [atom()].
http_children() -> [http_header, add_cookie, www_authenticate, soap, oauth].

%% @doc Refuse at `E''s line a `%%module:function%%' in `Text' whose module is not on the code
%% path (the scenario check would name only the sessions' line).
-spec calls(#xmlElement{}, string(), map()) -> ok.
calls(E, Text, Ctx) ->
    try beamscale_load_vars:parse(unicode:characters_to_binary(Text)) of
        _ -> ok
    catch throw:{bad, _, Msg} -> fail(E, Ctx, "~ts", [Msg])
    end.

%% @doc The elements that are steps of a session.
-spec step_names() -> [atom()].
step_names() -> [request, thinktime, transaction, 'for', repeat, 'if', setdynvars, abort,
                 foreach, set_option, interaction, change_type].

%% @doc The term of a dynamic step element; `Steps' translates the steps inside an element and
%% returns them with the targets they use.
-spec step(#xmlElement{}, map(), fun((#xmlElement{} | [#xmlElement{}]) -> {list(), list()})) ->
    {tuple(), list()}.
step(#xmlElement{name = setdynvars} = E, Ctx, _Steps) ->
    check_attrs(E, Ctx),
    Names = [begin check_attrs(V, Ctx), req(V, name, Ctx) end || V <- children(E, [var], Ctx)],
    [fail(E, Ctx, "<setdynvars> needs a <var>", []) || Names =:= []],
    {{setvars, Names, source(E, Ctx)}, []};
step(#xmlElement{name = abort} = E, Ctx, _Steps) ->
    check_attrs(E, Ctx),
    case attr(E, type, "session") of
        "session" -> {{abort, session}, []};
        "all" -> {{abort, all}, []};
        T -> fail(E, Ctx, "type=\"~ts\" (expected session or all)", [T])
    end;
step(#xmlElement{name = foreach} = E, Ctx, Steps) ->
    check_attrs(E, Ctx),
    {Body, Used} = Steps(E),
    Filter = [{K, V} || K <- [include, exclude], V <- [attr(E, K)], V =/= undefined],
    [fail(E, Ctx, "~ts=\"~ts\": ~ts at ~b", [K, V, Why, At])
     || {K, V} <- Filter, {error, {Why, At}} <- [re:compile(V, [unicode])]],
    {{foreach, req(E, name, Ctx), maps:from_list([{in, req(E, in, Ctx)} | Filter]), Body}, Used};
step(#xmlElement{name = 'if'} = E, Ctx, Steps) ->
    check_attrs(E, Ctx),
    {Body, Used} = Steps(E),
    {{'if', cond_(E, Ctx), Body}, Used};
step(#xmlElement{name = 'for'} = E, Ctx, Steps) ->
    check_attrs(E, Ctx),
    Incr = case attr(E, incr) of
               undefined -> 1;
               _ -> positive_integer(E, incr, Ctx)
           end,
    {From, To} = {integer(E, from, Ctx), integer(E, to, Ctx)},
    [fail(E, Ctx, "<for> runs more than ~b times", [?MAX_REPEATS])
     || (To - From) div Incr >= ?MAX_REPEATS],
    {Body, Used} = Steps(E),
    {{for, req(E, var, Ctx), #{from => From, to => To, incr => Incr}, Body}, Used};
step(#xmlElement{name = repeat} = E, Ctx, Steps) ->
    check_attrs(E, Ctx),
    All = children(E, step_names() ++ [while, until], Ctx),
    {BodyEls, Cond} = case lists:reverse(All) of
                          [#xmlElement{name = C} = Last | Rest] when C =:= while; C =:= until ->
                              {lists:reverse(Rest), Last};
                          _ -> fail(E, Ctx, "<repeat> must end with <while> or <until>", [])
                      end,
    [fail(X, Ctx, "<~ts> must be the last element of <repeat>", [N])
     || #xmlElement{name = N} = X <- BodyEls, N =:= while orelse N =:= until],
    Max = case attr(E, max_repeat) of
              undefined -> ?DEFAULT_MAX_REPEAT;
              _ -> positive_integer(E, max_repeat, Ctx)
          end,
    [fail(E, Ctx, "max_repeat=\"~ts\": at most ~b", [attr(E, max_repeat), ?MAX_REPEATS])
     || Max > ?MAX_REPEATS],
    check_attrs(Cond, Ctx),
    {Body, Used} = Steps(BodyEls),
    {{repeat, #{max => Max, Cond#xmlElement.name => cond_(Cond, Ctx)}, Body}, Used}.

%% Exactly one of Tsung's relations: eq and neq compare texts, gt, gte, lt and lte numbers.
cond_(E, Ctx) ->
    case [{Op, V} || Op <- [eq, neq, gt, gte, lt, lte], V <- [attr(E, Op)], V =/= undefined] of
        [{Op, V}] when Op =:= eq; Op =:= neq -> {req(E, var, Ctx), Op, V};
        [{Op, V}] ->
            case beamscale_load_vars:number(unicode:characters_to_binary(V)) of
                {ok, _} -> {req(E, var, Ctx), Op, V};
                error -> fail(E, Ctx, "~ts=\"~ts\" is not a number", [Op, V])
            end;
        _ -> fail(E, Ctx, "<~ts> needs one of eq, neq, gt, gte, lt, lte",
                  [E#xmlElement.name])
    end.

source(E, Ctx) ->
    case req(E, sourcetype, Ctx) of
        "random_number" -> {random_number, integer(E, start, Ctx), integer(E, 'end', Ctx)};
        T when T =:= "random_string"; T =:= "urandom_string" ->
            {random_string, positive_integer(E, length, Ctx)};
        "value" -> {value, req(E, value, Ctx)};
        "file" ->
            {file, req(E, fileid, Ctx), #{order => order(E, Ctx),
                                          delimiter => attr(E, delimiter, ";")}};
        "erlang" -> callback(E, req(E, callback, Ctx), Ctx);
        "eval" -> eval(E, req(E, code, Ctx), Ctx);
        "jsonpath" ->
            Path = req(E, jsonpath, Ctx),
            [fail(E, Ctx, "jsonpath=\"~ts\": ~ts", [Path, Msg])
             || {error, Msg} <- [beamscale_load_jsonpath:parse(Path)]],
            {jsonpath, req(E, from, Ctx), Path};
        T -> fail(E, Ctx, "sourcetype=\"~ts\" is not supported (random_number, random_string, "
                          "urandom_string, value, file, erlang, eval, jsonpath)", [T])
    end.

order(E, Ctx) ->
    case attr(E, order, "iter") of
        "iter" -> iter;
        "random" -> random;
        O -> fail(E, Ctx, "order=\"~ts\" (expected iter or random)", [O])
    end.

%% The file author's fun, checked now (its error at the element's line and the code's own line),
%% run per user by beamscale_load_eval, bounded in time and heap.
eval(E, Code, Ctx) ->
    case beamscale_load_eval:parse(Code) of
        {ok, _} -> {eval, Code};
        {error, Where, Msg} -> fail(E, Ctx, "code, ~ts: ~ts", [Where, Msg])
    end.

%% @doc `Steps' of a session `E' that names Tsung's `tsung_userid' (in a placeholder or eval
%% code) begin by setting it to the user's number, as Tsung does for every user.
-spec userid(#xmlElement{}, list()) -> list().
userid(E, Steps) ->
    case mentions(E, "tsung_userid") of
        true -> [{setvars, ["tsung_userid"], user_number} | Steps];
        false -> Steps
    end.

mentions(#xmlElement{attributes = As, content = C}, Word) ->
    lists:any(fun(#xmlAttribute{value = V}) -> string:find(V, Word) =/= nomatch end, As)
        orelse lists:any(fun(X) -> mentions(X, Word) end, C);
mentions(#xmlText{value = V}, Word) -> string:find(V, Word) =/= nomatch;
mentions(_, _Word) -> false.

%% Only a module that is on the code path is called (the name becomes an atom only then): the
%% input never names code that does not exist, and nothing is compiled from it.
callback(E, Text, Ctx) ->
    case {lists:member(Text, ?UNIQUE_ID), string:split(Text, ":")} of
        {true, _} -> user_number;
        {false, [M, F]} when M =/= "", F =/= "" ->
            case code:where_is_file(M ++ ".beam") of
                non_existing -> fail(E, Ctx, "callback ~ts: no module ~ts", [Text, M]);
                _ -> {erlang, list_to_atom(M), list_to_atom(F)}
            end;
        _ -> fail(E, Ctx, "callback=\"~ts\" (expected module:function)", [Text])
    end.

%% @doc The request keys of a `<request>''s `<dyn_variable>' and `<match>' children and its
%% `<http>''s `<add_cookie>' and `<www_authenticate>' children.
-spec request_keys(#xmlElement{}, #xmlElement{} | none, map()) -> map().
request_keys(Req, Http, Ctx) ->
    Kids = children(Req, [dyn_variable, match | beamscale_load_kinds:tsung_elements()], Ctx),
    Extract = [dyn_variable(D, Ctx) || #xmlElement{name = dyn_variable} = D <- Kids],
    Match = [match(M, Ctx) || #xmlElement{name = match} = M <- Kids],
    HttpKids = case Http of
                   none -> [];
                   _ -> children(Http, http_children(), Ctx)
               end,
    Cookies = [begin check_attrs(C, Ctx), {req(C, key, Ctx), req(C, value, Ctx)} end
               || #xmlElement{name = add_cookie} = C <- HttpKids],
    Auth = [www_auth(A, Ctx) || #xmlElement{name = www_authenticate} = A <- HttpKids]
           ++ [{oauth, oauth(A, Ctx)} || #xmlElement{name = oauth} = A <- HttpKids],
    [fail(Http, Ctx, "give one <www_authenticate> or <oauth>", []) || length(Auth) > 1],
    maps:from_list([{extract, Extract} || Extract =/= []] ++ [{match, Match} || Match =/= []]
                   ++ [{add_cookies, Cookies} || Cookies =/= []]
                   ++ Auth).

dyn_variable(E, Ctx) ->
    check_attrs(E, Ctx),
    Name = req(E, name, Ctx),
    [fail(E, Ctx, "decode=\"~ts\" is not supported", [D])
     || D <- [attr(E, decode, "false")], D =/= "false"],
    case {attr(E, re, attr(E, regexp)), attr(E, header)} of
        {undefined, undefined} ->
            case [{A, V} || A <- [jsonpath, xpath], V <- [attr(E, A)], V =/= undefined] of
                [{A, V}] -> {A, Name, V};
                [] -> fail(E, Ctx, "<dyn_variable> needs re, header, jsonpath or xpath (the "
                                   "default form-field search is not supported)", []);
                _ -> fail(E, Ctx, "give one of re, header, jsonpath and xpath", [])
            end;
        {Re, undefined} -> {re, Name, Re};
        {undefined, H} ->
            case string:split(H, "/") of
                [Header, Param] -> {header, Name, Header, Param};
                [_] -> {header, Name, H}
            end;
        _ -> fail(E, Ctx, "give re or header, not both", [])
    end.

match(E, Ctx) ->
    check_attrs(E, Ctx),
    Do = case attr(E, do, "continue") of
             D when D =:= "continue"; D =:= "log"; D =:= "abort"; D =:= "restart";
                    D =:= "loop"; D =:= "dump"; D =:= "abort_test" -> list_to_atom(D);
             D -> fail(E, Ctx, "do=\"~ts\" is not supported (continue, log, dump, abort, "
                               "restart, loop, abort_test)", [D])
         end,
    When = case attr(E, 'when', "match") of
               "match" -> match;
               "nomatch" -> nomatch;
               W -> fail(E, Ctx, "when=\"~ts\" (expected match or nomatch)", [W])
           end,
    Text = case attr(E, skip_headers, "no") of
               "no" -> headers;
               "http" -> body;
               S -> fail(E, Ctx, "skip_headers=\"~ts\" (expected no or http)", [S])
           end,
    Re = lists:flatten([V || #xmlText{value = V} <- E#xmlElement.content]),
    #{name => attr(E, name, "-"), re => Re, 'when' => When, do => Do, text => Text,
      max_restart => case attr(E, max_restart) of
                         undefined -> 3;
                         _ -> case integer(E, max_restart, Ctx) of
                                  N when N >= 0 -> N;
                                  _ -> fail(E, Ctx, "max_restart below 0", [])
                              end
                     end,
      max_loop => case attr(E, max_loop) of undefined -> 20;
                                              _ -> positive_integer(E, max_loop, Ctx) end,
      sleep_loop_ms => case attr(E, sleep_loop) of
                           undefined -> 5000;
                           _ -> round(non_negative(E, sleep_loop, Ctx) * 1000)
                       end}.

www_auth(E, Ctx) ->
    check_attrs(E, Ctx),
    case attr(E, type, "basic") of
        "basic" ->
            [fail(E, Ctx, "~ts is for type=\"digest\"", [A])
             || A <- [nonce, opaque, cnonce, nc, realm, qop], attr(E, A) =/= undefined],
            {basic_auth, {req(E, userid, Ctx), req(E, passwd, Ctx)}};
        "digest" ->
            [fail(E, Ctx, "qop=\"~ts\" is not supported (auth is)", [Q])
             || Q <- [attr(E, qop, "auth")], Q =/= "auth"],
            {digest_auth, maps:from_list(
                            [{user, req(E, userid, Ctx)}, {passwd, req(E, passwd, Ctx)},
                             {realm, req(E, realm, Ctx)}, {nonce, req(E, nonce, Ctx)}]
                            ++ [{K, V} || K <- [opaque, nc, cnonce],
                                          V <- [attr(E, K)], V =/= undefined])};
        T -> fail(E, Ctx, "type=\"~ts\" (expected basic or digest)", [T])
    end.

%% `<oauth consumer_key consumer_secret method access_token access_token_secret>': only
%% HMAC-SHA1, Tsung's default.
oauth(E, Ctx) ->
    check_attrs(E, Ctx),
    [fail(E, Ctx, "method=\"~ts\" is not supported (HMAC-SHA1 is)", [M])
     || M <- [attr(E, method, "HMAC-SHA1")], M =/= "HMAC-SHA1"],
    maps:from_list([{consumer_key, req(E, consumer_key, Ctx)},
                    {consumer_secret, req(E, consumer_secret, Ctx)}]
                   ++ [{K, V} || K <- [access_token, access_token_secret],
                                 V <- [attr(E, K)], V =/= undefined]).

%% @doc The `files' entry of the `<option name="file_server" id value>'s (id default "default").
-spec files([#xmlElement{}], map()) -> [{string(), string()}].
files(Options, Ctx) ->
    [begin check_attrs(O, Ctx), {attr(O, id, "default"), req(O, value, Ctx)} end
     || O <- Options, attr(O, name) =:= "file_server"].
