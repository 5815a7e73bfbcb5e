%% @doc The dynamic steps of a terms scenario (docs/scenario.md, "Dynamic scenarios"), checked
%% and normalised for `beamscale_load_scenario': `setvars', `if', `repeat', `for', the data
%% `files', and the keys of a request that make it dynamic (`%%_name%%' and `{var, Name}'
%% placeholders, `extract', `match', `cookies', `add_cookies', `basic_auth'). Errors are thrown
%% as `{bad, Path, Message}', as the scenario's checks throw them. Variable names become
%% binaries; nothing read here becomes an atom.
-module(beamscale_load_scenario_dyn).

-export([step/2, request/4, files/2, check_files/2, count_keys/1]).

-define(DYN_KEYS, [extract, match, cookies, add_cookies, basic_auth, digest_auth, oauth]).
%% The keys of `digest_auth' and `oauth' (docs/scenario.md), the required ones first.
-define(DIGEST_KEYS, {[user, passwd, realm, nonce], [opaque, nc, cnonce]}).
-define(OAUTH_KEYS, {[consumer_key, consumer_secret], [access_token, access_token_secret]}).
-define(MATCH_DEFAULTS, #{'when' => match, do => continue, text => headers, max_loop => 20,
                          sleep_loop_ms => 5000, max_restart => 3}).
-define(MAX_LOOP, 1000000).

%% @doc A dynamic step (`Steps' checks a nested list of steps), or `none' when `S' is not one.
-spec step(term(), fun((term()) -> list())) -> tuple() | none.
step({setvars, Names, Source}, _Steps) ->
    Ns = names(Names),
    {setvars, source(Source, length(Ns)), Ns};
step({'if', Cond, Body}, Steps) -> {'if', cond_(Cond, ['if']), Steps(Body)};
step({repeat, #{max := Max} = R, Body}, Steps) when is_integer(Max), Max > 0 ->
    only(R, [max, while, until], [repeat]),
    Cond = case maps:to_list(maps:without([max], R)) of
               [{Kind, C}] -> {Kind, cond_(C, [repeat, Kind])};
               _ -> bad([repeat], "give one of while or until")
           end,
    {repeat, Max, Steps(Body), Cond};
step({repeat, _, _}, _) -> bad([repeat], "expected {repeat, #{max => N, while | until => "
                                         "{Var, eq | neq | gt | gte | lt | lte, Value}}, Steps}");
step({for, Var, #{from := F, to := T} = R, Body}, Steps) when is_integer(F), is_integer(T) ->
    only(R, [from, to, incr], ['for']),
    Incr = case maps:get(incr, R, 1) of
               I when is_integer(I), I > 0 -> I;
               _ -> bad(['for', incr], "expected a positive integer")
           end,
    [bad(['for'], "more than 1000000 rounds") || (T - F) div Incr > ?MAX_LOOP],
    {for, name(Var), F, T, Incr, Steps(Body)};
%% Tsung's `<foreach name in include exclude>': the body once per value of the list variable
%% `in' (its one value when it holds one, none when unset), kept by `include' and dropped by
%% `exclude' (regular expressions).
step({foreach, Var, #{in := In} = F, Body}, Steps) ->
    only(F, [in, include, exclude], [foreach]),
    Filter = {[re(R, [foreach, include]) || R <- [maps:get(include, F, none)], R =/= none],
              [re(R, [foreach, exclude]) || R <- [maps:get(exclude, F, none)], R =/= none]},
    {foreach, name(Var), name(In), Filter, Steps(Body)};
step({foreach, _, _, _}, _) -> bad([foreach], "expected {foreach, Var, #{in => ListVar, "
                                              "include => Re, exclude => Re}, Steps}");
%% The first `users' users to reach it wait for each other, each at most `timeout_ms'
%% (beamscale_load_rendezvous; counted per load node).
step({rendezvous, Name, #{users := N} = R}, _Steps) when is_integer(N), N > 0, N =< ?MAX_LOOP ->
    only(R, [users, timeout_ms], [rendezvous]),
    Ms = case maps:get(timeout_ms, R, 60000) of
             T when is_integer(T), T > 0, T < 1 bsl 32 -> T;
             _ -> bad([rendezvous, timeout_ms], "expected ms from 1 to 2^32-1")
         end,
    {rendezvous, name(Name), N, Ms};
step({rendezvous, _, _}, _) -> bad([rendezvous], "expected {rendezvous, Name, #{users => N "
                                                 "(1 to 1000000), timeout_ms => Ms}}");
step({for, _, _, _}, _) -> bad(['for'], "expected {for, Var, #{from => I, to => J, incr => K}, "
                                        "Steps}");
step(_, _) -> none.

names(Ns) when is_list(Ns), Ns =/= [] ->
    case io_lib:printable_unicode_list(Ns) of
        true -> [name(Ns)];
        false -> [name(N) || N <- Ns]
    end;
names(N) -> [name(N)].

name(N) when is_atom(N) -> atom_to_binary(N);
name(N) when is_binary(N), N =/= <<>> -> N;
name(N) when is_list(N), N =/= [] ->
    case io_lib:printable_unicode_list(N) of
        true -> unicode:characters_to_binary(N);
        false -> bad([], "expected a variable name")
    end;
name(_) -> bad([], "expected a variable name").

source({random_number, A, B}, _) when is_integer(A), is_integer(B), A =< B ->
    {random_number, A, B};
source({random_string, L}, _) when is_integer(L), L > 0, L =< 1 bsl 20 -> {random_string, L};
source({random_bytes, L}, _) when is_integer(L), L > 0, L =< 1 bsl 20 -> {random_bytes, L};
source(user_number, _) -> user_number;
source(time, _) -> time;
source({value, V}, _) -> {value, beamscale_load_vars:value(V)};
source({erlang, M, F}, _) when is_atom(M), is_atom(F) ->
    case code:ensure_loaded(M) of
        {module, M} ->
            [bad([setvars, erlang], io_lib:format("~ts:~ts/1 is not exported", [M, F]))
             || not erlang:function_exported(M, F, 1)],
            {erlang, M, F};
        _ -> bad([setvars, erlang], io_lib:format("no module ~ts (only existing modules are "
                                                  "called)", [M]))
    end;
source({file, Id, Opts}, _) when is_map(Opts) ->
    only(Opts, [order, delimiter], [setvars, file]),
    Order = case maps:get(order, Opts, iter) of
                O when O =:= iter; O =:= random -> O;
                _ -> bad([setvars, file, order], "expected iter or random")
            end,
    Delim = case beamscale_load_vars:value(maps:get(delimiter, Opts, ";")) of
                <<>> -> bad([setvars, file, delimiter], "expected a non-empty text");
                D -> D
            end,
    {file, name(Id), Order, Delim};
source({file, Id}, N) -> source({file, Id, #{}}, N);
source({jsonpath, From, P}, _) ->
    case beamscale_load_jsonpath:parse(beamscale_load_vars:value(P)) of
        {ok, Steps} -> {jsonpath, name(From), Steps};
        {error, Msg} -> bad([setvars, jsonpath], Msg)
    end;
source({choice, [_ | _] = L}, _) ->
    [bad([setvars, choice], "expected [{Weight, Value}] with weights above 0")
     || X <- L, not (tuple_size(X) =:= 2 andalso is_number(element(1, X))
                     andalso element(1, X) > 0)],
    {choice, [{W, beamscale_load_vars:value(V)} || {W, V} <- L]};
%% The code is parsed once here; beamscale_load_eval runs it per user, bounded.
source({eval, Code}, _) ->
    case io_lib:char_list(Code) orelse is_binary(Code) of
        true ->
            case beamscale_load_eval:parse(Code) of
                {ok, Exprs} -> {eval, Exprs};
                {error, Where, Msg} ->
                    bad([setvars, eval], io_lib:format("the code, ~ts: ~ts", [Where, Msg]))
            end;
        false -> bad([setvars, eval], "expected the code of a fun as a string")
    end;
source(_, _) ->
    bad([setvars], "expected {random_number, From, To}, {random_string, Len}, {random_bytes, "
                   "Len}, {erlang, Module, Function}, {file, Id, #{order, delimiter}}, "
                   "{choice, [{Weight, V}]}, {eval, Code}, user_number, time or {value, V}").

cond_({Var, Op, Value}, _Path) when Op =:= eq; Op =:= neq ->
    {name(Var), Op, beamscale_load_vars:value(Value)};
cond_({Var, Op, Value}, Path) when Op =:= gt; Op =:= gte; Op =:= lt; Op =:= lte ->
    V = beamscale_load_vars:value(Value),
    case beamscale_load_vars:number(V) of
        {ok, _} -> {name(Var), Op, V};
        error -> bad(Path, io_lib:format("~ts compares numbers: ~tp is not one", [Op, Value]))
    end;
cond_(_, Path) -> bad(Path, "expected {Var, eq | neq | gt | gte | lt | lte, Value}").

%% @doc A request step: `{request, Mod, Target, Checked, Timeout}' when nothing in it is
%% dynamic, else `{dyn, Dyn, ...}' (see `beamscale_load_dynreq'). `Check' is the kind's check
%% of a spec; `Path' the error path of the request.
-spec request({request, module(), atom(), pos_integer()}, map(), fun((map()) -> map()),
              [atom()]) -> tuple().
request({request, Mod, Target, Timeout}, Spec, Check, Path) ->
    [bad(Path ++ [K], Msg) || {K, Msg} <- kind_keys(Mod), is_map_key(K, Spec)],
    Raw = maps:without(?DYN_KEYS, Spec),
    Dyn0 = #{extract => extracts(maps:get(extract, Spec, []), Path),
             match => matches(maps:get(match, Spec, []), Path),
             cookies => bool(maps:get(cookies, Spec, false), Path ++ [cookies]),
             add_cookies => [{beamscale_load_vars:value(K), beamscale_load_vars:value(V)}
                             || {K, V} <- pairs(maps:get(add_cookies, Spec, []), Path)],
             auth => auth(maps:with([basic_auth, digest_auth, oauth], Spec), Path)},
    Respond = Dyn0 =/= #{extract => [], match => [], cookies => false, add_cookies => [],
                         auth => none},
    Raw1 = case Respond of
               true -> Raw#{respond => respond(Mod, Dyn0)};
               false -> Raw
           end,
    Template = beamscale_load_vars:compile(Raw1),
    Checked = Check(case Template of
                        static -> Raw1;
                        _ -> element(1, beamscale_load_vars:render(Template, #{}))
                    end),
    case {Template, Respond} of
        {static, false} -> {request, Mod, Target, Checked, Timeout};
        _ -> {dyn, Dyn0#{template => Template, raw => Raw1,
                         head => head(Mod, Template, Raw1, Check)},
              {request, Mod, Target, Checked, Timeout}}
    end.

%% A request of a kind with reply headers (`headers' feature) whose headers nothing reads (no
%% cookies, no header taken, no check on the headers) gets its status and body only: its
%% headers are not kept (docs/load-measurements.md, "Client CPU").
respond(Mod, #{cookies := false, extract := Ex, match := Ms}) ->
    Headers = [E || E <- Ex, element(1, E) =:= header]
        ++ [M || #{text := headers} = M <- Ms],
    case Headers =:= [] andalso beamscale_load_kinds:allows(Mod, headers) of
        true -> body;
        false -> true
    end;
respond(_, _) -> true.

%% The keys a kind cannot serve, said when the scenario is read (the kind's `features/0').
kind_keys(Mod) ->
    Fs = beamscale_load_kinds:features(Mod),
    [{K, only_text(F)} || {K, F} <- [{cookies, cookies}, {add_cookies, cookies},
                                     {basic_auth, auth}, {digest_auth, auth}, {oauth, auth},
                                     {extract, extract}, {match, match}],
                          not lists:member(F, Fs)].

only_text(Feature) ->
    Names = [atom_to_list(M:name()) || M <- beamscale_load_kinds:all(),
                                       beamscale_load_kinds:allows(M, Feature)],
    ["applies to ", lists:join(" and ", Names), " requests only"].

%% A request with a compiled head (`head' feature: http) whose placeholders are all texts in
%% its path and headers: its bytes built
%% once with the placeholders in them, and its head compiled as one text to fill per request,
%% as Tsung substitutes in the built request (a spec rebuilt and checked per request cost more
%% than the request itself; docs/load-measurements.md, "Client CPU"). `none' for any other
%% request: a `{var, Name}' (a value of another type) or a placeholder in the body (its length).
head(Mod, Template, Raw, Check) ->
    Keys = beamscale_load_vars:text_keys(Template),
    case beamscale_load_kinds:allows(Mod, head) andalso is_list(Keys)
        andalso Keys -- [path, headers] =:= [] of
        true ->
            try Check(Raw) of
                Built ->
                    {Head, Body} = Mod:head_body(Built),
                    {Head, beamscale_load_vars:compile_head(Head), Body}
            catch throw:{bad, _, _} -> none
            end;
        false -> none
    end.

extracts(L, Path) when is_list(L) -> [extract(E, Path ++ [extract]) || E <- L];
extracts(_, Path) -> bad(Path ++ [extract], "expected a list").

extract({re, Name, Re}, Path) -> {re, name(Name), re(Re, Path)};
extract({re, Name, Re, all}, Path) -> {re_all, name(Name), re(Re, Path)};
extract({header, Name, H}, _) ->
    {header, name(Name), string:lowercase(beamscale_load_vars:value(H))};
extract({header, Name, H, Param}, _) ->
    {header, name(Name), string:lowercase(beamscale_load_vars:value(H)),
     string:lowercase(beamscale_load_vars:value(Param))};
extract({status, Name}, _) -> {status, name(Name)};
extract({jsonpath, Name, P}, Path) ->
    case beamscale_load_jsonpath:parse(beamscale_load_vars:value(P)) of
        {ok, Steps} -> {jsonpath, name(Name), Steps};
        {error, Msg} -> bad(Path, "JSONPath: " ++ Msg)
    end;
extract({xpath, Name, X}, Path) ->
    case beamscale_load_xpath:compile(beamscale_load_vars:value(X)) of
        {ok, C} -> {xpath, name(Name), C};
        {error, Msg} -> bad(Path, "XPath: " ++ Msg)
    end;
extract(_, Path) -> bad(Path, "expected {re, Var, Regex}, {header, Var, Name}, {header, Var, "
                               "Name, Param}, {jsonpath, Var, Path}, {xpath, Var, Path} or "
                               "{status, Var}").

%% Compiled once, here. In bytes, as Tsung runs them, unless the expression holds a character
%% beyond ASCII: in UTF-8 mode every run first checks that the whole response is valid UTF-8
%% (5 of the 16 reductions of a run on a 50-byte body, more on larger ones; docs/scenario.md,
%% "Client CPU"), and a response that is not would stop the user.
re(Re, Path) ->
    Bin = beamscale_load_vars:value(Re),
    Mode = case lists:all(fun(C) -> C < 128 end, binary_to_list(Bin)) of
               true -> [];
               false -> [unicode]
           end,
    case re:compile(Bin, Mode) of
        {ok, MP} -> MP;
        {error, {Why, At}} -> bad(Path, io_lib:format("regular expression: ~ts at ~b",
                                                      [Why, At]))
    end.

matches(L, Path) when is_list(L) -> [match(M, Path ++ [match]) || M <- L];
matches(_, Path) -> bad(Path ++ [match], "expected a list").

match(#{name := N, re := Re} = M0, Path) ->
    M = maps:merge(?MATCH_DEFAULTS, M0),
    only(M, maps:keys(?MATCH_DEFAULTS) ++ [name, re], Path),
    #{'when' := W, do := Do, text := T, max_loop := ML, sleep_loop_ms := SL,
      max_restart := MR} = M,
    [bad(Path ++ ['when'], "expected match or nomatch") || not lists:member(W, [match, nomatch])],
    [bad(Path ++ [do], "expected continue, log, dump, abort, restart, loop or abort_test")
     || not lists:member(Do, [continue, log, dump, abort, restart, loop, abort_test])],
    [bad(Path ++ [max_restart], "expected a number of restarts")
     || not (is_integer(MR) andalso MR >= 0 andalso MR =< ?MAX_LOOP)],
    [bad(Path ++ [text], "expected headers or body") || not lists:member(T, [headers, body])],
    [bad(Path ++ [max_loop], "expected a positive integer")
     || not (is_integer(ML) andalso ML > 0 andalso ML =< ?MAX_LOOP)],
    [bad(Path ++ [sleep_loop_ms], "expected milliseconds")
     || not (is_integer(SL) andalso SL >= 0 andalso SL =< 3600000)],
    M#{name := name(N), re := re(Re, Path), do := Do};
match(_, Path) -> bad(Path, "expected #{name => N, re => Regex, ...}").

pairs(L, _) when is_list(L) -> L;
pairs(_, Path) -> bad(Path ++ [add_cookies], "expected [{Name, Value}]").

auth(M, _) when map_size(M) =:= 0 -> none;
auth(#{basic_auth := {U, P}} = M, _) when map_size(M) =:= 1 -> {basic, template(U), template(P)};
auth(#{basic_auth := _} = M, Path) when map_size(M) =:= 1 ->
    bad(Path ++ [basic_auth], "expected {User, Password}");
auth(#{digest_auth := D} = M, Path) when map_size(M) =:= 1 ->
    {digest, auth_map(D, ?DIGEST_KEYS, Path ++ [digest_auth])};
auth(#{oauth := O} = M, Path) when map_size(M) =:= 1 ->
    {oauth, auth_map(O, ?OAUTH_KEYS, Path ++ [oauth])};
auth(_, Path) -> bad(Path, "give one of basic_auth, digest_auth and oauth").

auth_map(M, {Req, Opt}, Path) when is_map(M) ->
    only(M, Req ++ Opt, Path),
    [bad(Path ++ [K], "missing") || K <- Req, not is_map_key(K, M)],
    maps:map(fun(_, V) -> template(V) end, M);
auth_map(_, _, Path) -> bad(Path, "expected a map").

template(T) ->
    case beamscale_load_vars:compile(beamscale_load_vars:value(T)) of
        static -> {dynamic, beamscale_load_vars:value(T)};
        Dyn -> Dyn
    end.

bool(B, _) when is_boolean(B) -> B;
bool(_, Path) -> bad(Path, "expected true or false").

%% @doc The `files' entry: `[{Id, "path"}]', each read (relative to the scenario file).
-spec files(term(), file:filename()) -> #{binary() => [binary()]}.
files(L, File) when is_list(L) ->
    maps:from_list(
      [case beamscale_load_vars_source:read_lines(Path, File) of
           {ok, Lines} -> {name(Id), Lines};
           {error, E} -> bad([Id], lists:flatten(beamscale_load_vars_source:format_error(E)))
       end || {Id, Path} <- L]);
files(_, _) -> bad([], "expected [{Id, \"path\"}]").

%% @doc Every file a `setvars' reads is in `files'.
-spec check_files([map()], #{binary() => term()}) -> ok.
check_files(Sessions, Files) ->
    [bad([Name, steps, setvars], io_lib:format("file ~ts is not in files", [Id]))
     || #{name := Name, steps := Steps} <- Sessions,
        {setvars, {file, Id, _, _}, _} <- flat(Steps), not is_map_key(Id, Files)],
    ok.

%% @doc The named counters of the sessions' checks and unset variables.
-spec count_keys([map()]) -> [binary()].
count_keys(Sessions) ->
    lists:usort(lists:append([keys(S) || #{steps := Steps} <- Sessions, S <- flat(Steps)])).

%% A send that waits for no reply (`ack => no_ack') is counted apart, as Tsung's request_noack.
keys({request, _, _, #{ack := no_ack}, _}) -> [<<"request_noack">>];
keys({dyn, #{template := T, match := Ms, auth := A}, Request}) ->
    Auth = case A of
               {basic, U, P} -> beamscale_load_vars:names(U) ++ beamscale_load_vars:names(P);
               {_, Ts} -> lists:flatmap(fun beamscale_load_vars:names/1, maps:values(Ts));
               none -> []
           end,
    keys(Request) ++ beamscale_load_match:count_keys(Ms)
        ++ [<<"unset.", N/binary>> || N <- beamscale_load_vars:names(T) ++ Auth,
                                       not beamscale_load_vars:internal(N)];
keys(_) -> [].

flat(Steps) -> beamscale_load_steps:all(Steps).

only(Map, Keys, Path) ->
    [bad(Path ++ [K], "unknown key") || K <- maps:keys(Map), not lists:member(K, Keys)],
    ok.

-spec bad([term()], iodata()) -> no_return().
bad(Path, Msg) -> throw({bad, Path, lists:flatten(Msg)}).
