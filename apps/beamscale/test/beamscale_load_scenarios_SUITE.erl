%% Several scenarios in one run (k6's `scenarios', issue 49) through `beamscale load', against a
%% server of known service time (beamscale_target_workers on a peer node: 32 workers, 50 ms a
%% request) and a quick call: each scenario with its own executor, start time and tags, checked
%% on its executor's property, on its start, and on its figures and thresholds by the implicit
%% tag `scenario=NAME'; `ctl' answering per scenario or refusing in words; bad files refused.
-module(beamscale_load_scenarios_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([side_by_side/1, ctl_refused/1, refused/1]).
-export([side_by_side/0, ctl_refused/0, refused/0]).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [side_by_side, ctl_refused, refused].

init_per_suite(Config) -> Config.

end_per_suite(_Config) ->
    ok = beamscale_test_cli:no_strays().

scenario(Config, Name, Scenarios) ->
    File = filename:join(?config(priv_dir, Config), Name ++ ".scenario"),
    ok = file:write_file(File, io_lib:format(
        "{targets, [{sut, #{start => #{erl => \"erl\", flags => \"+sbwt none\",~n"
        "    init => {beamscale_target_workers, start, [32, 50]}}}}]}.~n"
        "{scenarios, ~ts}.~n"
        "{sessions, [{slow, #{steps => [{rpc, #{call => {beamscale_target_workers, request, []},"
        "~n                                        timeout_ms => 5000}}]}},~n"
        "            {quick, #{weight => 0, steps => [{rpc, #{call => {erlang, node, []}}}]}}]}."
        "~n{drain_s, 2}.~n", [Scenarios])),
    File.

%% The `scenarios' list of these names and options, a scenario a line.
many(Scenarios) ->
    ["[", lists:join(",\n ", [io_lib:format("{~s, #{~ts}}", [N, Opts]) || {N, Opts} <- Scenarios]),
     "]"].

summary(Dir) ->
    {ok, Bin} = file:read_file(filename:join(Dir, "summary.json")),
    {ok, S} = beamscale_format_json:decode(Bin),
    S.

side_by_side() -> [{doc, "checkout (per_user_iterations 3 x 4, from 0 s) and browse "
                    "(constant_arrival_rate 20/s for 2 s from 3 s): exactly 12 and 40 requests "
                    "by tag scenario=, none of browse before 3 s, phases named together, "
                    "p95{tag:scenario=checkout}<45ms fails, p95{scenario=browse}<45ms passes "
                    "(exit 1)."}].
side_by_side(Config) ->
    Out = ?config(priv_dir, Config),
    Sc = scenario(Config, "side_by_side",
                  many([{checkout, "executor => per_user_iterations, users => 3, iterations => 4,"
                                   " duration_s => 8, tags => #{team => \"a\"}"},
                        {browse, "executor => constant_arrival_rate, rate => 20, duration_s => 2,"
                                 " pre_allocated => 10, start_s => 3, exec => quick"}])),
    {1, Text} = beamscale_test_cli:run(["load", Sc, "--name", "side_by_side", "--out", Out,
                                        "--quiet",
                                        "--threshold", "p95{tag:scenario=checkout}<45ms",
                                        "--threshold", "p95{scenario=browse}<5000ms"]),
    ct:log("~ts", [Text]),
    %% 45 ms: below checkout's 50 ms service time whatever the host. browse's quick calls read
    %% a p95 of 806 ms beside a hog per core: a latency is no bound for a case, so theirs is 5 s.
    ?assertMatch({match, _}, re:run(Text, "FAIL  p95\\{tag:scenario=checkout\\}<45ms")),
    ?assertMatch({match, _}, re:run(Text, "pass  p95\\{scenario=browse\\}<5000ms")),
    S = summary(filename:join(Out, "side_by_side")),
    #{<<"requests_by_tag">> := ByTag, <<"per_second">> := Secs, <<"requests">> := All} = S,
    Count = fun(T) -> maps:get(<<"requests">>, maps:get(T, ByTag)) end,
    %% Each executor's own count: 3 users x 4 iterations; 20/s over 2 s, none dropped.
    ?assertEqual(12, Count(<<"scenario=checkout">>)),
    ?assertEqual(40, Count(<<"scenario=browse">>)),
    ?assertEqual(12, Count(<<"team=a">>)),
    ?assertEqual(52, All),
    ?assertEqual(40, maps:get(<<"offered_iterations">>, maps:get(<<"counts">>, S))),
    ?assertEqual(0, maps:get(<<"dropped_iterations">>, maps:get(<<"counts">>, S))),
    %% Browse starts at 3 s: the seconds to 3 started checkout's 12 only.
    Started = fun(Upto) -> lists:sum([N || #{<<"t_s">> := T, <<"sessions_started">> := N} <- Secs,
                                           T =< Upto]) end,
    ?assertEqual(12, Started(3)),
    ?assertEqual(52, Started(100)),
    Phase = fun(T) -> hd([P || #{<<"t_s">> := X, <<"phase">> := P} <- Secs, X =:= T]) end,
    ?assertEqual(<<"checkout">>, Phase(1)),
    ?assertEqual(<<"checkout+browse">>, Phase(4)),
    %% The page: each scenario's start in the phases' table, the split in the "By tag" table.
    {ok, Html} = file:read_file(filename:join([Out, "side_by_side", "index.html"])),
    ?assertMatch({match, _}, re:run(Html, "start \\(s\\).*browse</td><td[^>]*>3<", [dotall])),
    ?assertMatch({match, _}, re:run(Html, "By tag.*scenario=browse", [dotall])).

ctl_refused() -> [{doc, "Two scenarios side by side: ctl status names those running "
                   "(hold+late), ctl users 3 and rate 5 are refused in words (exit 1)."}].
ctl_refused(Config) ->
    Out = ?config(priv_dir, Config),
    Sc = scenario(Config, "ctl_refused",
                  many([{hold, "executor => constant_users, users => 2, duration_s => 6"},
                        {late, "executor => constant_arrival_rate, rate => 5, duration_s => 4, "
                               "pre_allocated => 5, start_s => 1, exec => quick"}])),
    Dir = filename:join(Out, "ctl_refused"),
    Load = beamscale_test_cli:open(["load", Sc, "--name", "ctl_refused", "--out", Out,
                                    "--quiet"]),
    {os_pid, OsPid} = erlang:port_info(Load, os_pid),
    try
        CtlJson = filename:join(Dir, "ctl.json"),
        ok = beamscale_test_load:wait_for(fun() -> filelib:is_regular(CtlJson) end, 60000),
        Ctl = fun(Words) -> beamscale_test_cli:run(["ctl", Dir | Words]) end,
        ok = beamscale_test_load:wait_for(
               fun() ->
                       case Ctl(["status"]) of
                           {0, St} -> re:run(St, "phase hold\\+late") =/= nomatch;
                           _ -> false
                       end
               end, 30000),
        {1, Users} = Ctl(["users", "3"]),
        ?assertMatch({match, _}, re:run(Users, "runs 2 scenarios side by side \\(hold, late\\)")),
        {1, Rate} = Ctl(["rate", "5"]),
        ?assertMatch({match, _}, re:run(Rate, "ctl rate and users set one phase")),
        {0, _} = beamscale_test_cli:wait(Load, 60000)
    after
        _ = erlang:port_info(Load) =:= undefined
            orelse os:cmd("kill " ++ integer_to_list(OsPid))
    end,
    ?assertMatch(#{<<"stopped">> := <<"done">>}, summary(Dir)).

refused() -> [{doc, "A scenario named twice, an unknown option, a start past the time limit, "
               "phases beside scenarios, saturate of scenarios: one line each naming file, "
               "line and key, exit 2."}].
refused(Config) ->
    Cases = [{"twice", "[{a, #{executor => constant_users, users => 1, duration_s => 1}},\n"
                       " {a, #{executor => constant_users, users => 1, duration_s => 1}}]",
              "twice.scenario:3: key scenarios.a: given twice"},
             {"unknown", "[{a, #{executor => constant_users, users => 1, duration_s => 1,\n"
                         "       rate => 3}}]",
              "unknown.scenario:4: key scenarios.a.rate: unknown key of constant_users"},
             {"late", "[{a, #{executor => constant_users, users => 1, duration_s => 1,\n"
                      "       start_s => 30}}]}.\n{time_limit_s, 20",
              "late.scenario:4: key scenarios.a.start_s: 30 s is not before the time limit"}],
    [begin
         Sc = scenario(Config, Name, Body),
         {2, Text} = beamscale_test_cli:run(["load", Sc, "--out", ?config(priv_dir, Config)]),
         ct:log("~ts", [Text]),
         ?assertMatch({match, _}, re:run(Text, re_quote(Want)))
     end || {Name, Body, Want} <- Cases],
    Both = scenario(Config, "both", "[{a, #{executor => constant_users, users => 1, "
                                    "duration_s => 1}}]}.\n{phases, [{p, #{duration_s => 1, "
                                    "rate => 1}}]"),
    {2, Text} = beamscale_test_cli:run(["load", Both, "--out", ?config(priv_dir, Config)]),
    ?assertMatch({match, _}, re:run(Text, "both.scenario:[34]: key scenarios: give phases or "
                                          "scenarios, not both")),
    %% saturate's levels replace the phases: a file of scenarios has none to replace.
    Sat = scenario(Config, "sat", "[{a, #{executor => constant_users, users => 1, "
                                  "duration_s => 1}}]"),
    {2, SatText} = beamscale_test_cli:run(["saturate", Sat, "--out", ?config(priv_dir, Config)]),
    ?assertMatch({match, _}, re:run(SatText, "sat.scenario:1: key scenarios: saturate runs "
                                             "levels of one phase")).

re_quote(S) -> re:replace(S, "[.()\\[\\]{}+*?^$|\\\\]", "\\\\&", [global, {return, list}]).
