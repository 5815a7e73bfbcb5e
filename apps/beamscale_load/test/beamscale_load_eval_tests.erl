%% Tsung's eval funs: parsed once with their errors' lines, run bounded in time and heap, with
%% Tsung's ts_dynvars:lookup/2,3 served.
-module(beamscale_load_eval_tests).

-include_lib("eunit/include/eunit.hrl").

-define(E, beamscale_load_eval).
-define(NFS, "/usr/share/doc/tsung/examples/fs-nfs.xml").

run(Code, Vars, User) ->
    {ok, C} = ?E:parse(Code),
    ?E:run(C, 1, Vars, User).

parse_test_() ->
    [?_assertMatch({ok, [_]}, ?E:parse("fun({_Pid, _DynVars}) -> 1 end.")),
     %% Tsung writes the final dot; without it the fun is read as well.
     ?_assertMatch({ok, [_]}, ?E:parse("fun(_) -> 1 end")),
     ?_assertMatch({error, "line 4, column 1", "syntax error before: 'end'"},
                   ?E:parse("fun(_) ->\n  X = 1,\n  X +\nend.")),
     ?_assertMatch({error, "line 2, column 2", "variable 'Y' is unbound"},
                   ?E:parse("fun(_) ->\n Y end.")),
     ?_assertMatch({error, "line 1, column 1", "the fun must take one argument" ++ _},
                   ?E:parse("fun() -> 1 end.")),
     ?_assertMatch({error, "line 1, column 1", "expected one fun" ++ _}, ?E:parse("1 + 1.")),
     ?_assertMatch({error, "line 1, column 1", "no code"}, ?E:parse(""))].

run_test_() ->
    Lookup = "fun({Pid, DynVars}) -> true = is_pid(Pid),"
             " {ok, V} = ts_dynvars:lookup(tsung_userid, DynVars),"
             " {ok, D} = ts_dynvars:lookup(nothing, DynVars, \"d\"),"
             " {ok, W} = ts_dynvars:lookup(word, DynVars), V ++ D ++ W end.",
    [?_assertEqual({ok, [<<"7dhi">>]}, run(Lookup, #{<<"word">> => <<"hi">>}, 7)),
     ?_assertEqual({ok, [<<"a">>, <<"b">>]},
                   ?E:run(element(2, ?E:parse("fun(_) -> [a, <<\"b\">>] end.")), 2, #{}, 1)),
     ?_assertEqual({error, {error, badarith}}, run("fun(_) -> 1 / 0 end.", #{}, 1)),
     ?_assertMatch({error, {error, undef}}, run("fun(_) -> ts_dynvars:set(a, 1, []) end.",
                                                 #{}, 1))].

%% Killed at its deadline (1 s) and at its heap bound, leaving no process behind.
bounds_test_() ->
    {timeout, 30,
     fun() ->
             Before = length(processes()),
             ?assertEqual({error, timeout}, run("fun(_) -> receive after infinity -> ok end end.",
                                                #{}, 1)),
             ?assertEqual({error, heap},
                          run("fun(_) -> lists:seq(1, 100000000) end.", #{}, 1)),
             %% The fun and its watchdog are gone (the watchdog sees the DOWN just after).
             timer:sleep(100),
             ?assertEqual(Before, length(processes())),
             %% A user that dies while its fun runs takes the fun with it.
             {ok, Loop} = ?E:parse("fun(_) -> register(beamscale_eval_loop, self()), "
                                   "receive after infinity -> ok end end."),
             User = spawn(fun() -> ?E:run(Loop, 1, #{}, 1) end),
             Fun = registered(beamscale_eval_loop, 50),
             exit(User, kill),
             Ref = monitor(process, Fun),
             receive {'DOWN', Ref, process, Fun, _} -> ok after 500 -> error(fun_alive) end,
             ?assertEqual(<<"setdynvars: eval fun still running after 1000 ms: killed">>,
                          beamscale_load_reasons:text({eval, timeout}))
     end}.

registered(_Name, 0) -> error(not_registered);
registered(Name, N) ->
    case whereis(Name) of
        undefined -> timer:sleep(10), registered(Name, N - 1);
        Pid -> Pid
    end.

%% Tsung's own fs-nfs.xml fun: user 1 reads user 10's files, user 20 user 12's.
tsung_fun_test() ->
    {ok, Bin} = file:read_file(?NFS),
    [_, After] = binary:split(Bin, <<"code=\"">>),
    [Code | _] = binary:split(After, <<"\">">>),
    Text = binary:replace(Code, <<"&lt;">>, <<"<">>),
    ?assertEqual({ok, [<<"10">>]}, run(Text, #{}, 1)),
    ?assertEqual({ok, [<<"12">>]}, run(Text, #{}, 20)).

%% A syntax error in a file's eval code: the file, the element's line, where in the code (the
%% attribute's newlines are spaces: its column).
tsung_syntax_error_test() ->
    {ok, Bin} = file:read_file(?NFS),
    Broken = binary:replace(binary:replace(Bin, <<"{I,256};">>, <<"{I,256;">>),
                            <<"type=\"batch\" batch=\"torque\"">>, <<"host=\"localhost\"">>),
    {error, E} = beamscale_load_tsung:from_text("fs-nfs.xml", unicode:characters_to_list(Broken)),
    Msg = lists:flatten(beamscale_load_tsung:format_error(E)),
    ?assertMatch({match, _}, re:run(Msg, "^fs-nfs.xml:68: code, line 1, column [0-9]+: "
                                         "syntax error before: ';'"), Msg).
