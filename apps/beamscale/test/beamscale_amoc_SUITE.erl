%% `beamscale load --amoc' as a user runs it (issue 51): amoc scenarios of this suite's own
%% (its data directory) with init/start/terminate, required variables and their verifications,
%% a throttle's rate, a coordinator's plan, and each bad input refused in one line, exit 2,
%% before any user starts.
-module(beamscale_amoc_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([users/1, throttle_rate/1, throttle_two_nodes/1, coordinator_pairs/1,
         coordinator_two_nodes/1, throttle_ctl/1, amoc_do/1, bad_inputs/1,
         init_crash_on_nodes/1, requests/1, elixir/1]).
-export([users/0, throttle_rate/0, throttle_two_nodes/0, coordinator_pairs/0,
         coordinator_two_nodes/0, throttle_ctl/0, amoc_do/0, bad_inputs/0,
         init_crash_on_nodes/0, requests/0, elixir/0]).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [users, throttle_rate, throttle_two_nodes, coordinator_pairs, coordinator_two_nodes,
          throttle_ctl, amoc_do, bad_inputs, init_crash_on_nodes, requests, elixir].

%% The scenario `Name' of the data directory as a user's `.erl' (or `.ex') file in priv_dir.
scenario(Config, Name) ->
    Data = ?config(data_dir, Config),
    Ext = case filelib:is_file(filename:join(Data, Name ++ ".ex.txt")) of
              true -> ".ex";
              false -> ".erl"
          end,
    {ok, Text} = file:read_file(filename:join(Data, Name ++ Ext ++ ".txt")),
    Path = filename:join(?config(priv_dir, Config), Name ++ Ext),
    ok = file:write_file(Path, Text),
    Path.

out(Config, Name) -> filename:join(?config(priv_dir, Config), Name ++ ".out").

load(Config, Name, Args) -> load(Config, Name, Name, Args).

%% The run's name `Run' (its directory under priv_dir's `runs').
load(Config, Name, Run, Args) ->
    beamscale_test_cli:run(["load", "--amoc", scenario(Config, Name), "--quiet",
                            "--out", filename:join(?config(priv_dir, Config), "runs"),
                            "--name", Run | Args]).

consult(File) ->
    {ok, [Term]} = file:consult(File),
    Term.

users() -> [{doc, "Each user runs start/2 once with its own id; settings, stop/0, observe."}].
users(Config) ->
    Out = out(Config, "basic"),
    {0, _} = load(Config, "amoc_ct_basic",
                  ["--users", "12", "--rate", "100", "--set", "out=" ++ io_lib:write_string(Out),
                   "--set", "greeting=bye", "--set", "repeat=\"2\""]),
    Rows = consult(Out),
    %% Ids 1..12, each once per repeat, with the setting given; stop/0 ends the even ones.
    ?assertEqual(lists:sort([{I, bye, K} || I <- lists:seq(1, 12), K <- [1, 2]]),
                 [R || {_, bye, _} = R <- Rows]),
    ?assertEqual([{past_stop, I} || I <- lists:seq(1, 11, 2)], [R || {past_stop, _} = R <- Rows]),
    Sum = beamscale_test_load:json(run_dir(Config, "amoc_ct_basic"), "summary.json"),
    %% A user is a session; it made no request.
    ?assertMatch(#{<<"requests">> := 0, <<"errors">> := 0, <<"sessions_done">> := 12}, Sum),
    #{<<"transactions">> := #{<<"user_step">> := Step}} = Sum,
    %% Users observed 1..12 ms: their own timings, in the run's histograms.
    ?assertMatch(#{<<"count">> := 12}, Step),
    ?assert(abs(maps:get(<<"max_ms">>, Step) - 12.0) < 0.5).

run_dir(Config, Name) -> filename:join([?config(priv_dir, Config), "runs", Name]).

throttle_rate() -> [{doc, "A throttle of 50/s spaces 100 waits of 10 users over 2 s."}].
throttle_rate(Config) -> throttled(Config, "throttle", []).

throttle_two_nodes() ->
    [{doc, "Over 2 load nodes, with ids 1..N, a throttle of 50/s keeps 50/s in all."}].
throttle_two_nodes(Config) ->
    throttled(Config, "throttle2", ["--load-nodes", "2"]),
    Sum = beamscale_test_load:json(run_dir(Config, "throttle2"), "summary.json"),
    #{<<"load_nodes">> := Nodes} = Sum,
    ?assertEqual([5, 5], [R || #{<<"sessions_done">> := R} <- Nodes]),
    %% The throttle's figures over both nodes: the rate set, its 100 events, the rate they
    %% went at (never above the rate set; below it only on a host too loaded to keep it).
    #{<<"amoc">> := #{<<"throttles">> := [T], <<"coordinators">> := []}} = Sum,
    ct:pal("throttle figures: ~p", [T]),
    ?assertMatch(#{<<"name">> := <<"ct">>, <<"rate_per_s">> := 50.0, <<"released">> := 100,
                   <<"changes">> := 0}, T),
    Achieved = maps:get(<<"achieved_per_s">>, T),
    %% Over 2 nodes each lets one event through every 40 ms from its own start: 100 events may
    %% span 1.96 s (50.5/s), as the span asserted above.
    ?assert(Achieved =< 52.5 andalso Achieved >= 12),
    Page = page(Config, "throttle2"),
    ?assertMatch({match, _}, re:run(Page, "<h3>amoc throttles</h3>.*<td class=\"t\">ct</td>"
                                          "<td class=\"t\">50</td><td class=\"t\">100</td>")).

page(Config, Run) ->
    {ok, Html} = file:read_file(filename:join(run_dir(Config, Run), "index.html")),
    Html.

%% 10 users wait 10 times each on a throttle of 50/s (over the nodes that ran them).
throttled(Config, Run, Args) ->
    Out = out(Config, Run),
    {0, _} = load(Config, "amoc_ct_throttle", Run,
                  ["--users", "10", "--rate", "1000", "--set", "out=" ++ io_lib:write_string(Out)
                   | Args]),
    Each = [consult(F) || F <- filelib:wildcard(Out ++ ".*")],
    Times = lists:sort(lists:append([Ts || {Ts, _} <- Each])),
    ?assertEqual(100, length(Times)),
    %% Each user its own id, 1..10 over all the nodes (amoc_dist's).
    ?assertEqual(lists:seq(1, 10), lists:sort(lists:append([Ids || {_, Ids} <- Each]))),
    %% Without the throttle the 100 waits end within milliseconds; with it they take 99 gaps of
    %% 20 ms. The upper bound leaves a loaded host room: the rate is never above, only below.
    Span = lists:last(Times) - hd(Times),
    ct:pal("100 waits at 50/s took ~b ms (1980 expected)", [Span]),
    ?assert(Span >= 1900),
    ?assert(Span =< 8000),
    %% No second holds much more than its 50: the slots are 20 ms apart, but a wait is seen
    %% when its user runs again (and a late tick lets what it owes through at once), so a
    %% window opened by a late one may hold a few more; without the throttle it holds all 100.
    Most = lists:max([length([T || T <- Times, T >= T0, T < T0 + 1000]) || T0 <- Times]),
    ct:pal("most waits ended in one second: ~b", [Most]),
    ?assert(Most =< 60).

coordinator_pairs() -> [{doc, "A plan [{2, F}, {all, G}]: F for every pair, G at the end."}].
coordinator_pairs(Config) ->
    Rows = paired(Config, "pairs", 6, []),
    Ids = fun(Users) -> [Id || {Id, _Node} <- Users] end,
    Pairs = [Ids(P) || {pair, {coordinate, 2}, P} <- Rows],
    ?assertEqual(3, length(Pairs)),
    ?assertEqual(lists:seq(1, 6), lists:sort(lists:append(Pairs))),
    %% Each user was told its partner, and the `all' item got all six after the timeout.
    ?assertEqual(6, length([T || {told, _, _} = T <- Rows])),
    ?assertEqual([{all, {timeout, 6}, lists:seq(1, 6)}],
                 [{all, E, Ids(Us)} || {all, E, Us} <- Rows]),
    Sum = beamscale_test_load:json(run_dir(Config, "pairs"), "summary.json"),
    ?assertMatch(#{<<"sessions_done">> := 6, <<"errors">> := 0}, Sum).

coordinator_two_nodes() ->
    [{doc, "Over 2 load nodes one coordinator pairs users of both; G once with all."}].
coordinator_two_nodes(Config) ->
    Rows = paired(Config, "pairs2", 8, ["--load-nodes", "2"]),
    Pairs = [P || {pair, {coordinate, 2}, P} <- Rows],
    %% F for 4 pairs; each user in exactly one, its id and its node as it added itself.
    ?assertEqual(4, length(Pairs)),
    Users = lists:sort(lists:append(Pairs)),
    ?assertEqual(lists:seq(1, 8), [Id || {Id, _} <- Users]),
    ?assertEqual(2, length(lists:usort([N || {_, N} <- Users]))),
    %% The users arrive 20 ms apart, round the nodes in turn, and are paired as they add
    %% themselves: two of one node meet only if an add overtakes another's by 20 ms. That is
    %% possible on a loaded host, so one pair across the nodes is asserted, not all four.
    Across = [P || [{_, N1}, {_, N2}] = P <- Pairs, N1 =/= N2],
    ct:pal("pairs: ~p; across the nodes: ~b", [Pairs, length(Across)]),
    ?assert(length(Across) >= 1),
    %% Every user, on either node, was told its partner; G once, with all eight.
    ?assertEqual(8, length([T || {told, _, _} = T <- Rows])),
    ?assertEqual([{timeout, 8}], [E || {all, E, _} <- Rows]),
    ?assertEqual([Users], [Us || {all, _, Us} <- Rows]),
    Sum = beamscale_test_load:json(run_dir(Config, "pairs2"), "summary.json"),
    ?assertMatch(#{<<"sessions_done">> := 8, <<"errors">> := 0}, Sum),
    %% Its figures: 8 added, 4 groups of 2, the one timeout; on the page too.
    ?assertMatch(#{<<"amoc">> := #{<<"coordinators">> :=
                                       [#{<<"name">> := <<"amoc_ct_pairs">>, <<"added">> := 8,
                                          <<"groups">> := #{<<"2">> := 4}, <<"timeouts">> := 1,
                                          <<"resets">> := 0, <<"stops">> := 0}]}}, Sum),
    ?assertMatch({match, _}, re:run(page(Config, "pairs2"),
                                    "<h3>amoc coordinators</h3>.*<td class=\"t\">amoc_ct_pairs"
                                    "</td><td class=\"t\">8</td><td class=\"t\">4 of 2</td>"
                                    "<td class=\"t\">1</td>")).

throttle_ctl() ->
    [{doc, "ctl throttle NAME R changes a running throttle's rate on every load node."}].
throttle_ctl(Config) ->
    Out = out(Config, "ctl"),
    Dir = run_dir(Config, "ctl"),
    %% 120 waits at 10/s: 12 s unless the rate is changed.
    Load = beamscale_test_cli:open(["load", "--amoc", scenario(Config, "amoc_ct_throttle"),
                                    "--quiet", "--out", filename:dirname(Dir), "--name", "ctl",
                                    "--users", "4", "--rate", "1000", "--load-nodes", "2",
                                    "--set", "out=" ++ io_lib:write_string(Out),
                                    "--set", "per_second=10", "--set", "waits=30"]),
    {os_pid, OsPid} = erlang:port_info(Load, os_pid),
    try
        ok = wait_for(fun() -> filelib:is_regular(filename:join(Dir, "ctl.json")) end, 60000),
        Ctl = fun(Words) -> beamscale_test_cli:run(["ctl", Dir | Words]) end,
        %% ctl.json is there only once the load takes commands (and records them).
        {0, _} = Ctl(["status"]),
        {1, Nope} = Ctl(["throttle", "nope", "5"]),
        ?assertMatch({match, _}, re:run(Nope, "no throttle nope \\(the scenario's: ct\\)")),
        {0, Said} = Ctl(["throttle", "ct", "100"]),
        Changed = erlang:system_time(millisecond),
        ?assertMatch({match, _}, re:run(Said, "throttle ct: 100.0 events/s from now")),
        {0, _} = beamscale_test_cli:wait(Load, 60000),
        Times = lists:sort(lists:append([Ts || F <- filelib:wildcard(Out ++ ".*"),
                                               {Ts, _} <- [consult(F)]])),
        ?assertEqual(120, length(Times)),
        %% The waits after the change went at the new rate: far above the old 10/s (a value,
        %% with room for a loaded host), never much above 100/s.
        After = [T || T <- Times, T > Changed],
        Rate = (length(After) - 1) * 1000 / max(1, lists:last(After) - hd(After)),
        ct:pal("~b waits after the change, at ~.1f/s", [length(After), Rate]),
        ?assert(length(After) >= 20),
        ?assert(Rate >= 30 andalso Rate =< 110),
        #{<<"amoc">> := #{<<"throttles">> := [T]}} =
            beamscale_test_load:json(Dir, "summary.json"),
        ?assertMatch(#{<<"rate_per_s">> := 100.0, <<"changes">> := 1, <<"released">> := 120}, T),
        %% The change is an event of the run, as `ctl rate' is.
        {ok, Events} = file:read_file(filename:join(Dir, "events.csv")),
        ?assertMatch({match, _}, re:run(Events, "^[0-9.]+,throttle ct 100.0$", [multiline]))
    after
        _ = erlang:port_info(Load) =:= undefined
            orelse os:cmd("kill " ++ integer_to_list(OsPid))
    end.

amoc_do() ->
    [{doc, "amoc:do/3 runs a scenario module the caller loaded, with its settings given."}].
amoc_do(Config) ->
    Priv = ?config(priv_dir, Config),
    Out = out(Config, "do"),
    Src = scenario(Config, "amoc_ct_basic"),
    %% The caller compiles and loads the module itself, as amoc's user does, then calls do/3.
    Eval = io_lib:format("{ok, M, B} = compile:file(~0tp, [binary]), "
                         "{module, M} = code:load_binary(M, ~0tp, B), "
                         "R = amoc:do(M, 4, [{out, ~0tp}, {greeting, bye}, {repeat, \"2\"}]), "
                         "io:format(\"do: ~~p, kept: ~~p~~n\", [R, code:is_loaded(M) =/= false]), "
                         "halt(0).", [Src, Src, Out]),
    [Erl | Rest] = beamscale_test_cli:command([]),
    Paths = lists:takewhile(fun(A) -> A =/= "-eval" end, Rest),
    Port = open_port({spawn_executable, Erl},
                     [{args, Paths ++ ["-eval", lists:flatten(Eval)]}, {cd, Priv}, exit_status,
                      binary, stderr_to_stdout]),
    {0, Output} = beamscale_test_cli:wait(Port, 60000),
    ct:pal("~ts", [Output]),
    ?assertMatch({match, _}, re:run(Output, "do: ok, kept: true")),
    Rows = consult(Out),
    ?assertEqual(lists:sort([{I, bye, K} || I <- lists:seq(1, 4), K <- [1, 2]]),
                 [R || {_, bye, _} = R <- Rows]),
    %% Its run directory under the caller's current one.
    [Run] = filelib:wildcard(filename:join([Priv, "runs", "load-*"])),
    ?assertMatch(#{<<"sessions_done">> := 4, <<"errors">> := 0},
                 beamscale_test_load:json(Run, "summary.json")).

wait_for(Fun, Ms) when Ms =< 0 -> Fun() orelse error(timeout), ok;
wait_for(Fun, Ms) ->
    case Fun() of
        true -> ok;
        false -> timer:sleep(100), wait_for(Fun, Ms - 100)
    end.

%% The amoc_ct_pairs scenario with `Users' users: what every node's terminate wrote.
paired(Config, Run, Users, Args) ->
    Out = out(Config, Run),
    {0, _} = load(Config, "amoc_ct_pairs", Run,
                  ["--users", integer_to_list(Users), "--rate", "50",
                   "--set", "out=" ++ io_lib:write_string(Out) | Args]),
    lists:append([consult(F) || F <- filelib:wildcard(Out ++ ".*")]).

bad_inputs() -> [{doc, "Each bad input: one line naming it, exit 2, no user, no run."}].
bad_inputs(Config) ->
    Basic = fun(Sets) -> {"amoc_ct_basic", ["--users", "2" | Sets]} end,
    Out = "out=" ++ io_lib:write_string(out(Config, "never")),
    Word = "zq_no_atom_" ++ integer_to_list(erlang:unique_integer([positive])),
    Cases =
        [{{"amoc_ct_syntax", ["--users", "2"]}, "amoc_ct_syntax.erl does not compile: line 6: "},
         {Basic([]), "required variable out (the file terminate writes) has no value and no "
                     "default, and its verification refuses undefined: give --set out=VALUE or "
                     "AMOC_OUT"},
         {Basic(["--set", Out, "--set", "greeting=ok"]),
          "required variable greeting = ok: its verification failed"},
         {Basic(["--set", Out, "--set", "repeat=\"x\""]),
          "required variable repeat = \"x\": its verification failed: not_a_count"},
         {Basic(["--set", Out, "--set", "greeting=" ++ Word]),
          "(variable greeting): " ++ Word ++ " is an atom no module uses"},
         {Basic(["--set", Out, "--set", "nope=1"]),
          "--set nope: not a required variable of the scenario (it declares: out, greeting, "
          "repeat)"},
         {{"amoc_ct_init_crash", ["--users", "2"]},
          "amoc_ct_init_crash:init/0 raised error:no_server_to_load"},
         {{"amoc_ct_init_error", ["--users", "2"]},
          "amoc_ct_init_error:init/0 returned {error, not_ready}"},
         {{"amoc_ct_basic", ["--set", Out]}, "option --amoc: give --users N"}],
    [begin
         Run = "bad" ++ integer_to_list(I),
         {Code, Output} = load(Config, Name, Run, Args),
         Lines = string:lexemes(Output, "\n"),
         ct:pal("~ts ~p: ~p ~ts", [Name, Args, Code, Output]),
         ?assertEqual({2, 1}, {Code, length(Lines)}),
         ?assertNotEqual(nomatch, string:find(hd(Lines), Expected)),
         ?assertNot(filelib:is_dir(run_dir(Config, Run)))
     end || {I, {{Name, Args}, Expected}} <- lists:enumerate(Cases)],
    ?assertError(badarg, list_to_existing_atom(Word)).

init_crash_on_nodes() ->
    [{doc, "An init/0 that crashes on a load node: one line, exit 2, no load."}].
init_crash_on_nodes(Config) ->
    {Code, Output} = load(Config, "amoc_ct_init_crash", ["--users", "2", "--load-nodes", "2"]),
    %% One line, and no report of `global' failing to reach the other, gone load node (load
    %% nodes run with -connect_all false: they never meet).
    ?assertMatch({2, [_]}, {Code, string:lexemes(Output, "\n")}),
    ?assertEqual(nomatch, string:find(Output, "WARNING REPORT")),
    ?assertMatch({match, _}, re:run(Output, "amoc_ct_init_crash.erl: load node bs_load[12]_\\S+: "
                                            "amoc_ct_init_crash:init/0 raised "
                                            "error:no_server_to_load")),
    %% The nodes were up (the run's directory made), no user ran: no load.csv.
    ?assertNot(filelib:is_file(filename:join(run_dir(Config, "amoc_ct_init_crash"), "load.csv"))).

requests() -> [{doc, "A scenario's requests through the http kind: counted, named, by reason, "
                      "in pages."}].
requests(Config) ->
    {ok, Srv} = beamscale_target_http:start(#{}),
    try
        Port = integer_to_list(beamscale_target_http:port(Srv)),
        {0, _} = load(Config, "amoc_ct_http", ["--users", "5", "--rate", "100",
                                               "--set", "port=" ++ Port]),
        Dir = run_dir(Config, "amoc_ct_http"),
        Sum = beamscale_test_load:json(Dir, "summary.json"),
        ?assertMatch(#{<<"requests">> := 20, <<"errors">> := 5, <<"sessions_done">> := 5}, Sum),
        #{<<"errors_by_reason">> := Reasons} = Sum,
        ?assertEqual([5], maps:values(Reasons)),
        %% Tsung's page: a user's requests before its throttle wait, and those after it.
        ?assertMatch(#{<<"page_time">> := #{<<"count">> := 10}}, Sum),
        %% The named ones in requests.csv, apart from the rest.
        {ok, Csv} = file:read_file(filename:join(Dir, "requests.csv")),
        ?assertMatch({match, _}, re:run(Csv, "^home,15,0,", [multiline]))
    after
        beamscale_target_http:stop(Srv)
    end.

elixir() -> [{doc, "An Elixir scenario module: compiled here, its settings, its users."}].
elixir(Config) ->
    Out = out(Config, "elixir"),
    {0, _} = load(Config, "amoc_ct_elixir", ["--users", "4", "--rate", "100", "--set",
                                             "out=" ++ io_lib:write_string(Out),
                                             "--set", "greeting=bye"]),
    ?assertEqual([{I, bye} || I <- lists:seq(1, 4)], consult(Out)),
    {2, Line} = load(Config, "amoc_ct_elixir", "elixir2", ["--users", "2", "--load-nodes", "2"]),
    ?assertMatch({match, _}, re:run(Line, "amoc_ct_elixir.ex: Elixir scenarios run in "
                                          "beamscale's own node only")).
