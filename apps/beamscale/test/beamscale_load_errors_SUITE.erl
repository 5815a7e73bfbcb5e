%% Load runs that say what went wrong (issue 15): errors counted by reason (errors.csv,
%% summary.json, the closing lines, the page), rpc results checked, targets that cannot be set up
%% refused before any load, a target that dies said, --max-error-rate, run directories never
%% overwritten silently, and the run's cookie on no command line.
-module(beamscale_load_errors_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([errors_by_reason/1, cli_gate_and_names/1, setup_failures/1, mnesia_dir_in_use/1,
         target_dies/1, cookie_hidden/1, report_cut_short/1, load_node_killed/1,
         missing_call_nested/1]).
-export([errors_by_reason/0, cli_gate_and_names/0, setup_failures/0, mnesia_dir_in_use/0,
         target_dies/0, cookie_hidden/0, report_cut_short/0, load_node_killed/0,
         missing_call_nested/0]).

suite() -> [{timetrap, {minutes, 4}}].

all() -> [errors_by_reason, cli_gate_and_names, setup_failures, missing_call_nested,
          mnesia_dir_in_use, target_dies, cookie_hidden, report_cut_short, load_node_killed].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

file(Config, Name, Text) ->
    Path = filename:join(?config(priv_dir, Config), Name),
    ok = file:write_file(Path, Text),
    Path.

%% Five kinds of failure, one of them per request of a session, and one call that succeeds.
errors_scenario(Port) ->
    io_lib:format(
      "{targets, [{sut, #{start => #{}}}, {web, #{address => \"127.0.0.1:~b\"}}]}.\n"
      "{phases, [{p, #{duration_s => 2, rate => 10}}]}.\n"
      "{sessions, [{s, #{steps => [\n"
      "  {rpc, #{target => sut, call => {file, read_file, [\"/nonexistent/x\"]}}},\n"
      "  {rpc, #{target => sut, call => {erlang, error, [boom]}}},\n"
      "  {rpc, #{target => sut, call => {beamscale_target_echo, echo, [x]}, expect => y}},\n"
      "  {rpc, #{target => sut, call => {beamscale_target_echo, echo, [{ok, 1, [a]}]},\n"
      "          expect => {ok, '_', [a]}}},\n"
      "  {http, #{target => web, status => 404}}]}}]}.\n{sample, []}.\n", [Port]).

errors_by_reason() -> [{doc, "Errors by reason in errors.csv, summary.json and the page."}].
errors_by_reason(Config) ->
    {ok, Srv} = beamscale_target_http:start(#{}),
    Dir = filename:join(?config(priv_dir, Config), "reasons"),
    try
        Path = file(Config, "reasons.scenario", errors_scenario(beamscale_target_http:port(Srv))),
        {ok, S} = beamscale_load_scenario:load(Path),
        {ok, Dir, _} = beamscale_loadtest:run(S, #{dir => Dir, quiet => true, seed => 5}),
        Sum = beamscale_test_load:json(Dir, "summary.json"),
        #{<<"requests">> := Req, <<"errors">> := Err, <<"sessions_done">> := Done,
          <<"errors_by_reason">> := ByReason} = Sum,
        ?assert(Done > 5),
        ?assertEqual(5 * Done, Req),
        ?assertEqual(4 * Done, Err),
        ?assertEqual(#{<<"rpc returned {error, enoent}">> => Done,
                       <<"exception error: boom">> => Done,
                       <<"rpc result not as expected: x">> => Done,
                       <<"http status 200">> => Done}, ByReason),
        %% errors.csv: a row per second and reason, adding up to the totals.
        Rows = beamscale_store:read_rows(filename:join(Dir, "errors.csv")),
        ?assert(length(Rows) >= 4),
        Summed = lists:foldl(fun(#{reason := R, count := C}, Acc) ->
                                     maps:update_with(R, fun(X) -> X + binary_to_integer(C) end,
                                                      binary_to_integer(C), Acc)
                             end, #{}, Rows),
        ?assertEqual(ByReason, Summed),
        %% statuses.csv: every HTTP reply by status, per second, adding up to summary.json's.
        ?assertEqual(#{<<"200">> => Done}, maps:get(<<"statuses">>, Sum)),
        StatusRows = beamscale_store:read_rows(filename:join(Dir, "statuses.csv")),
        ?assertEqual(Done, lists:sum([binary_to_integer(C)
                                      || #{status := <<"200">>, count := C} <- StatusRows])),
        {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
        ?assertMatch({_, _}, binary:match(Html, <<"replies by status">>)),
        ?assertMatch({_, _}, binary:match(Html, <<"errors by reason">>)),
        ?assertMatch({_, _}, binary:match(Html, <<"exception error: boom">>))
    after
        beamscale_target_http:stop(Srv)
    end.

cli_gate_and_names() ->
    [{doc, "--max-error-rate exits 1; closing lines; names checked; no silent overwrite."}].
cli_gate_and_names(Config) ->
    {ok, Srv} = beamscale_target_http:start(#{}),
    Out = filename:join(?config(priv_dir, Config), "cli"),
    try
        Path = file(Config, "cli.scenario", errors_scenario(beamscale_target_http:port(Srv))),
        {1, Text} = beamscale_test_cli:run(["load", Path, "--out", Out, "--name", "gate",
                                            "--max-error-rate", "50"]),
        ct:pal("~ts", [Text]),
        [?assertNotEqual(nomatch, string:find(Text, S))
         || S <- ["errors by reason: ", "exception error: boom", "http status 200",
                  "replies by status: 200 ",
                  "more than --max-error-rate 50 %"]],
        %% The same name again: refused, naming the directory, which is left as it was.
        Gate = filename:join(Out, "gate"),
        {ok, Before} = file:read_file(filename:join(Gate, "summary.json")),
        {2, Again} = beamscale_test_cli:run(["load", Path, "--out", Out, "--name", "gate"]),
        ?assertNotEqual(nomatch, string:find(Again, Gate ++ " exists")),
        ?assertEqual({ok, Before}, file:read_file(filename:join(Gate, "summary.json"))),
        {0, _} = beamscale_test_cli:run(["load", Path, "--out", Out, "--name", "gate",
                                         "--replace", "--max-error-rate", "90", "--quiet"]),
        ?assertNotEqual({ok, Before}, file:read_file(filename:join(Gate, "summary.json"))),
        [begin
             {2, Bad} = beamscale_test_cli:run(["load", Path, "--out", Out, "--name", Name]),
             ?assertNotEqual(nomatch, string:find(Bad, "option --name"))
         end || Name <- ["..", "../x", "<script>a</script>", "a/b"]],
        ?assertEqual({ok, ["gate"]}, file:list_dir(Out))
    after
        beamscale_target_http:stop(Srv)
    end.

setup_failures() -> [{doc, "An init that fails or a missing module: exit 2, no load run."}].
setup_failures(Config) ->
    Out = filename:join(?config(priv_dir, Config), "setup"),
    Cases = [{"raises", "init => {erlang, error, [no_setup]}", "echo, [x]",
              "its set-up failed"},
             {"returns", "init => {file, read_file, [\"/nonexistent/y\"]}", "echo, [x]",
              "its set-up returned an error"},
             %% A code path that holds code, but not the function called.
             {"missing", "code_path => [\"" ++ code:lib_dir(stdlib, ebin) ++ "\"]", "nosuch, []",
              "beamscale_target_echo:nosuch/0 is not there"}],
    [begin
         Path = file(Config, Name ++ ".scenario",
                     ["{targets, [{sut, #{start => #{", Init, "}}}]}.\n"
                      "{phases, [{p, #{duration_s => 1, rate => 5}}]}.\n"
                      "{sessions, [{s, #{steps => [{rpc, #{call => {beamscale_target_echo, ",
                      Call, "}}}]}}]}.\n"]),
         T0 = erlang:monotonic_time(millisecond),
         {Code, Text} = beamscale_test_cli:run(["load", Path, "--out", Out, "--name", Name]),
         ct:pal("~s: ~b ~ts", [Name, Code, Text]),
         ?assertEqual(2, Code),
         ?assertNotEqual(nomatch, string:find(Text, Says)),
         ?assertEqual(nomatch, string:find(Text, "requests")),
         ?assertNot(filelib:is_file(filename:join([Out, Name, "load.csv"]))),
         ?assert(erlang:monotonic_time(millisecond) - T0 < 30000)
     end || {Name, Init, Call, Says} <- Cases],
    beamscale_test_cli:no_strays().

missing_call_nested() ->
    [{doc, "An rpc step naming a missing function inside if, repeat, for or a dynamic "
           "request: exit 2 before any load (issue 30)."}].
missing_call_nested(Config) ->
    Out = filename:join(?config(priv_dir, Config), "nested"),
    Rpc = "{rpc, #{call => {beamscale_target_echo, nosuch, []}}}",
    Cases = [{"if", "{'if', {x, eq, 1}, [" ++ Rpc ++ "]}", "nosuch/0"},
             {"repeat", "{repeat, #{max => 2, while => {x, eq, 1}}, [" ++ Rpc ++ "]}",
              "nosuch/0"},
             {"for", "{for, i, #{from => 1, to => 2}, [" ++ Rpc ++ "]}", "nosuch/0"},
             %% A placeholder in its arguments makes the request dynamic.
             {"dyn", "{rpc, #{call => {beamscale_target_echo, nosuch, [{var, x}]}}}",
              "nosuch/1"}],
    [begin
         Path = file(Config, Name ++ ".scenario",
                     ["{targets, [{sut, #{start => #{}}}]}.\n"
                      "{phases, [{p, #{duration_s => 1, rate => 5}}]}.\n"
                      "{sessions, [{s, #{steps => [", Step, "]}}]}.\n"]),
         {Code, Text} = beamscale_test_cli:run(["load", Path, "--out", Out, "--name", Name]),
         ct:pal("~s: ~b ~ts", [Name, Code, Text]),
         ?assertEqual(2, Code),
         ?assertNotEqual(nomatch, string:find(Text, "beamscale_target_echo:" ++ Says ++
                                                  " is not there")),
         ?assertEqual(nomatch, string:find(Text, "requests")),
         ?assertNot(filelib:is_file(filename:join([Out, Name, "load.csv"])))
     end || {Name, Step, Says} <- Cases],
    beamscale_test_cli:no_strays().

mnesia_dir_in_use() ->
    [{doc, "A load whose Mnesia target's directory another node holds: exit 2, no load run."}].
mnesia_dir_in_use(Config) ->
    MDir = filename:join(?config(priv_dir, Config), "load_errors_mnesia"),
    Out = filename:join(?config(priv_dir, Config), "load_errors_mnesia_out"),
    %% The holder: a node of this test with the Mnesia target started on the directory.
    {ok, #{node := Holder} = H} =
        beamscale_node:start("holder", #{erl => os:find_executable("erl"), flags => "",
                                         schedulers => 1}),
    try
        ok = beamscale_code:load(Holder, beamscale_code:apps([beamscale_bench,
                                                              beamscale_targets])),
        {ok, _} = erpc:call(Holder, beamscale_target_mnesia, start, [#{dir => MDir}], 60000),
        Path = file(Config, "load_errors_mnesia.scenario",
                    io_lib:format("{targets, [{sut, #{start => #{init => {beamscale_target_mnesia, "
                                  "start, [#{dir => ~p}]}}}}]}.\n"
                                  "{phases, [{p, #{duration_s => 2, rate => 20}}]}.\n"
                                  "{sessions, [{s, #{steps => [{rpc, #{call => "
                                  "{beamscale_target_mnesia, write, [1]}}}]}}]}.\n", [MDir])),
        T0 = erlang:monotonic_time(millisecond),
        {Code, Text} = beamscale_test_cli:run(["load", Path, "--out", Out, "--name", "m"]),
        ct:pal("~b ~ts", [Code, Text]),
        ?assertEqual(2, Code),
        ?assertNotEqual(nomatch, string:find(Text, "Mnesia directory " ++ MDir ++
                                                 " is in use by node " ++ atom_to_list(Holder))),
        ?assertEqual(nomatch, string:find(Text, "requests")),
        ?assertEqual(nomatch, string:find(Text, "REPORT")),
        ?assertNot(filelib:is_file(filename:join([Out, "m", "load.csv"]))),
        %% Well before Mnesia's table timeout (30 s).
        ?assert(erlang:monotonic_time(millisecond) - T0 < 25000),
        %% The holder's table is untouched.
        ?assertEqual({ok, #{written => 5}},
                     erpc:call(Holder, beamscale_target_mnesia, write, [5], 60000))
    after
        beamscale_node:stop(H)
    end.

target_dies() -> [{doc, "A target node that halts mid-load is said; the run ends on time."}].
target_dies(Config) ->
    Out = filename:join(?config(priv_dir, Config), "dies"),
    Path = file(Config, "dies.scenario",
                "{targets, [{sut, #{start => #{init => {timer, apply_after, "
                "[1500, erlang, halt, []]}}}}]}.\n"
                "{phases, [{p, #{duration_s => 4, rate => 20}}]}.\n"
                "{sessions, [{s, #{steps => [{rpc, #{call => {beamscale_target_echo, echo, "
                "[x]}}}, {think, 60000}]}}]}.\n{time_limit_s, 6}.\n"),
    T0 = erlang:monotonic_time(millisecond),
    {0, Text} = beamscale_test_cli:run(["load", Path, "--out", Out, "--name", "d"]),
    ct:pal("~ts", [Text]),
    ?assert(erlang:monotonic_time(millisecond) - T0 < 40000),
    Dir = filename:join(Out, "d"),
    ?assertMatch({match, _}, re:run(Text, "target sut: node '?bs_sut[^ ]* went down at 1\\.")),
    ?assertNotEqual(nomatch, string:find(Text, "node down (noconnection)")),
    ?assertNotEqual(nomatch, string:find(Text, "cut by the time limit after")),
    ?assertMatch({match, _}, re:run(Text, "[0-9]+ sessions started, 0 done")),
    #{<<"targets_down">> := [#{<<"target">> := <<"sut">>}]} =
        beamscale_test_load:json(Dir, "run.json"),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertMatch({_, _}, binary:match(Html, <<"Targets down">>)),
    ?assertMatch({_, _}, binary:match(Html, <<"sut (bs_sut">>)).

cookie_hidden() -> [{doc, "No process's command line holds the cookie of a running load."}].
cookie_hidden(Config) ->
    Path = file(Config, "cookie.scenario",
                "{targets, [{sut, #{start => #{}}}]}.\n"
                "{phases, [{p, #{duration_s => 3, rate => 5}}]}.\n"
                "{sessions, [{s, #{steps => [{rpc, #{call => {erlang, node, []}}}]}}]}.\n"
                "{load_nodes, 1}.\n"),
    %% priv_dir is shared by every suite of a run: a name of this case alone.
    Dir = filename:join(?config(priv_dir, Config), "load_errors_cookie_hidden"),
    %% A cookie directory left by a command killed while a node booted (its pid is gone) is
    %% removed by the next node start; one of a live command (this emulator) stays.
    Tmp = case os:getenv("TMPDIR") of false -> "/tmp"; "" -> "/tmp"; T -> T end,
    Stale = filename:join(Tmp, "beamscale-cookie-" ++ dead_pid() ++ "-errsuite"),
    Live = filename:join(Tmp, "beamscale-cookie-" ++ os:getpid() ++ "-errsuite"),
    [ok = file:make_dir(D) || D <- [Stale, Live]],
    {ok, S} = beamscale_load_scenario:load(Path),
    Self = self(),
    Spy = spawn_link(fun() -> Self ! {self(), spy(atom_to_list(erlang:get_cookie()), [], 0)} end),
    {ok, Dir, _} = beamscale_loadtest:run(S, #{dir => Dir, quiet => true}),
    Spy ! stop,
    receive
        {Spy, {Seen, Holding}} ->
            ct:pal("beam.smp command lines seen: ~b", [Seen]),
            %% This node, the target node and the load node.
            ?assert(Seen >= 3),
            ?assertEqual([], Holding)
    end,
    ?assertNot(filelib:is_dir(Stale)),
    ?assert(filelib:is_dir(Live)),
    ok = file:del_dir(Live).

%% The pid of a process that has ended (a shell that printed its pid and exited).
dead_pid() ->
    Pid = string:trim(os:cmd("sh -c 'echo $$'")),
    false = filelib:is_dir("/proc/" ++ Pid),
    Pid.

%% Read every process's command line until told to stop: how many emulators it saw
%% at most at once, and the command lines that held the cookie.
spy(Cookie, Holding, Seen) ->
    Cmds = [binary:replace(B, <<0>>, <<" ">>, [global])
            || P <- filelib:wildcard("[0-9]*", "/proc"),
               {ok, B} <- [file:read_file("/proc/" ++ P ++ "/cmdline")]],
    %% An emulator's command line, whatever its argv[0] (under rebar3: rebar3).
    Beams = length([C || C <- Cmds, binary:match(C, <<" -progname erl ">>) =/= nomatch]),
    Held = [C || C <- Cmds, binary:match(C, list_to_binary(Cookie)) =/= nomatch],
    receive stop -> {max(Seen, Beams), Holding ++ Held}
    after 200 -> spy(Cookie, Holding ++ Held, max(Seen, Beams))
    end.

report_cut_short() ->
    [{doc, "report on a load directory without its final files: a page, and what is missing."}].
report_cut_short(Config) ->
    {ok, Srv} = beamscale_target_http:start(#{}),
    Dir = filename:join(?config(priv_dir, Config), "load_errors_cut_short"),
    try
        Path = file(Config, "load_errors_cut_short.scenario",
                    errors_scenario(beamscale_target_http:port(Srv))),
        {ok, S} = beamscale_load_scenario:load(Path),
        {ok, Dir, _} = beamscale_loadtest:run(S, #{dir => Dir, quiet => true, seed => 7}),
        #{<<"requests">> := Req, <<"errors_by_reason">> := ByReason} =
            beamscale_test_load:json(Dir, "summary.json"),
        %% What a load killed before its end leaves: the files written as it goes.
        [ok = file:delete(filename:join(Dir, F))
         || F <- ["summary.json", "run.json", "index.html"]],
        {0, Text} = beamscale_test_cli:run(["report", Dir]),
        ct:pal("~ts", [Text]),
        ?assertNotEqual(nomatch, string:find(Text, "cut short: no summary.json, run.json")),
        {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
        [?assertMatch({_, _}, binary:match(Html, B))
         || B <- [<<"cut short: no summary.json, run.json">>, <<"errors by reason">>,
                  <<">", (integer_to_binary(Req))/binary, "</td>">>
                  | [escaped(R) || R <- maps:keys(ByReason)]]]
    after
        beamscale_target_http:stop(Srv)
    end.

escaped(R) -> iolist_to_binary(beamscale_report_html:escape(R)).

load_node_killed() ->
    [{doc, "A load node killed mid-load: one line, marked in the report, on time, exit 1."}].
load_node_killed(Config) ->
    Out = filename:join(?config(priv_dir, Config), "load_errors_killed"),
    Path = file(Config, "load_errors_killed.scenario",
                "{targets, [{sut, #{start => #{}}}]}.\n"
                "{phases, [{p, #{duration_s => 5, rate => 20}}]}.\n"
                "{sessions, [{s, #{steps => [{rpc, #{call => {beamscale_target_echo, echo, "
                "[x]}}}, {think, 100}]}}]}.\n{load_nodes, 2}.\n"),
    %% The command's nodes inherit its environment: this mark finds them, and only them.
    Mark = "BEAMSCALE_TEST_MARK=" ++ integer_to_list(erlang:unique_integer([positive])),
    [Erl | Rest] = beamscale_test_cli:command(["load", Path, "--out", Out, "--name", "k"]),
    Port = open_port({spawn_executable, Erl},
                     [{args, Rest}, exit_status, binary, stderr_to_stdout,
                      {env, [list_to_tuple(string:split(Mark, "="))]}]),
    T0 = erlang:monotonic_time(millisecond),
    {Early, OsPid} = kill_when(Port, <<>>, Mark, "bs_load2_"),
    {Code, Late} = beamscale_test_cli:wait(Port, 60000),
    Text = binary_to_list(Early) ++ Late,
    ct:pal("killed ~s; exit ~b~n~ts", [OsPid, Code, Text]),
    ?assertEqual(1, Code),
    %% Ends on time: 5 s of load, a little drain, far from the time limit's grace.
    ?assert(erlang:monotonic_time(millisecond) - T0 < 30000),
    Said = [L || L <- string:split(Text, "\n", all), string:find(L, "load node") =/= nomatch],
    %% At once, in the closing lines, and the exit reason.
    ?assertEqual(3, length(Said)),
    ?assertMatch({match, _}, re:run(Text, "load node '?bs_load2_[^ ]* went down at [0-9.]+ s "
                                           "\\(noconnection\\)")),
    [?assertEqual(nomatch, string:find(Text, W)) || W <- ["REPORT", "crash", "** "]],
    Dir = filename:join(Out, "k"),
    #{<<"load_nodes_down">> := [#{<<"node">> := <<"bs_load2_", _/binary>>}]} =
        beamscale_test_load:json(Dir, "run.json"),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertMatch({_, _}, binary:match(Html, <<"Load nodes down">>)),
    ?assertMatch({_, _}, binary:match(Html, <<"bs_load2_">>)),
    beamscale_test_cli:no_strays().

%% Read the command's output until its second 2, then kill -9 its load node named `Prefix'
%% (found by the mark in its environment): the output so far and the OS pid killed.
kill_when(Port, Acc, Mark, Prefix) ->
    receive
        {Port, {data, D}} ->
            Acc1 = <<Acc/binary, D/binary>>,
            case binary:match(Acc1, <<"   2s ">>) of
                nomatch -> kill_when(Port, Acc1, Mark, Prefix);
                _ ->
                    [OsPid] = marked(Mark, Prefix),
                    _ = os:cmd("kill -9 " ++ OsPid),
                    {Acc1, OsPid}
            end;
        {Port, {exit_status, S}} -> ct:fail({ended_before_the_kill, S, Acc})
    after 60000 -> ct:fail({no_second_2, Acc})
    end.

marked(Mark, Prefix) ->
    [P || P <- filelib:wildcard("[0-9]*", "/proc"),
          {ok, Env} <- [file:read_file("/proc/" ++ P ++ "/environ")],
          binary:match(Env, list_to_binary([Mark, 0])) =/= nomatch,
          {ok, Cmd} <- [file:read_file("/proc/" ++ P ++ "/cmdline")],
          binary:match(Cmd, <<"-name", 0, (list_to_binary(Prefix))/binary>>) =/= nomatch].
