%% `beamscale report' and the report `beamscale run' writes: summary files, escaping, and
%% index.html rendered by headless Chromium.
-module(beamscale_cmd_report_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([summary_files/1, escaped/1, renders_in_chromium/1, run_ends_with_report/1,
         not_a_run_dir/1]).
-export([summary_files/0, escaped/0, renders_in_chromium/0, run_ends_with_report/0,
         not_a_run_dir/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [summary_files, escaped, renders_in_chromium, run_ends_with_report, not_a_run_dir].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

%% Two erls, two flag sets, two benchmarks (one with a nasty args string), schedulers 1 and 2.
fixture(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "run-a"),
    Nasty = beamscale_rundir_fixture:nasty(),
    beamscale_rundir_fixture:write(
      Dir, #{benches => [{<<"big">>, <<"[128]">>, 0.2}, {<<"nasty">>, Nasty, 0.1}],
             otps => [<<"otp25">>, <<"otp", Nasty/binary>>], flags => [<<"default">>, <<"sbt">>],
             iterations => 5, host => Nasty,
             failures => [[<<"nasty">>, Nasty, <<"otp25">>, <<"default">>, 2, 1, 9, Nasty]],
             sanity => [[<<"big">>, <<"passed">>, <<>>], [<<"nasty">>, <<"failed">>, Nasty]]}).

summary_files() -> [{doc, "summary.csv/.json: a row per cell with speedup, n, sanity."}].
summary_files(Config) ->
    Dir = fixture(Config),
    {ok, Index} = beamscale_writer:write(Dir),
    ?assert(filelib:is_regular(Index)),
    Rows = beamscale_store:read_rows(filename:join(Dir, "summary.csv")),
    ?assertEqual(2 * 2 * 2 * 2, length(Rows)),
    {ok, Bin} = file:read_file(filename:join(Dir, "summary.csv")),
    [Header | _] = binary:split(Bin, <<"\n">>),
    ?assertMatch(<<"benchmark,phase,args,otp,erl_args,schedulers,nodes,n,median_s,mean_s,"
                   "stddev_s,min_s,max_s,ci95_low_s,ci95_high_s,speedup,efficiency,sanity",
                   _/binary>>, Header),
    [R2] = [R || #{benchmark := <<"big">>, otp := <<"otp25">>, erl_args := <<"default">>,
                   schedulers := <<"2">>} = R <- Rows],
    %% The fixture halves the time at 2 schedulers (noise +-5 %).
    Speedup = binary_to_float(maps:get(speedup, R2)),
    ?assert(Speedup > 1.8 andalso Speedup < 2.2),
    ?assertEqual(<<"5">>, maps:get(n, R2)),
    ?assertEqual(<<"passed">>, maps:get(sanity, R2)),
    {ok, Json} = file:read_file(filename:join(Dir, "summary.json")),
    {ok, #{<<"results">> := Results}} = beamscale_format_json:decode(Json),
    ?assertEqual(16, length(Results)).

escaped() -> [{doc, "report escapes every hostile string in index.html."}].
escaped(Config) ->
    Dir = fixture(Config),
    ?assertEqual(0, beamscale_cli:dispatch(["report", Dir])),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertEqual(nomatch, binary:match(Html, [<<"<script">>, <<"<b>">>])),
    Escaped = beamscale_report_html:escape(beamscale_rundir_fixture:nasty()),
    %% Host, args, erl alias, failure reason, sanity detail: all there, all escaped.
    ?assert(length(binary:matches(Html, Escaped)) >= 5).

renders_in_chromium() -> [{doc, "Headless Chromium draws each chart with its series."}].
renders_in_chromium(Config) ->
    case os:find_executable("chromium") of
        false -> ct:fail("chromium not installed (scripts/install-deps.sh installs it)");
        Chromium ->
            Dir = fixture(Config),
            {ok, Index} = beamscale_writer:write(Dir),
            Dom = beamscale_test_chromium:run(Chromium, Config,
                                              ["--dump-dom", beamscale_test_chromium:url(Index)]),
            Charts = beamscale_test_chromium:charts(Dom),
            {ok, Data} = beamscale_writer:load(Dir),
            %% One more series on each chart: the ideal line on speedup charts, the iterations
            %% beside the medians on time charts.
            Expected = [length(S) + 1 || {_, Gs} <- beamscale_report_run:graphs(
                                                      maps:get(rows, Data)),
                                         {_, _Kind, S} <- Gs],
            %% 2 benchmarks: time, speedup, 2 per erl, 2 per flag set.
            ?assertEqual(12, length(Expected)),
            ?assertEqual(Expected, [beamscale_test_chromium:series(C) || C <- Charts]),
            [?assert(binary:match(C, <<"<polyline">>) =/= nomatch) || C <- Charts],
            Shot = beamscale_test_chromium:screenshot(Chromium, Config, Index),
            ?assert(filelib:file_size(Shot) > 20000)
    end.

run_ends_with_report() -> [{doc, "run prints its index.html; report rebuilds the same."}].
run_ends_with_report(Config) ->
    Out = ?config(priv_dir, Config),
    ct:capture_start(),
    Code = beamscale_cli:dispatch(["run", "--bench", "big", "--schedulers", "1,2",
                                   "--iterations", "2", "--launches", "1", "--warmups", "0",
                                   "--name", "e2e",
                                   "--out", Out, "--quiet"]),
    ct:capture_stop(),
    Lines = string:lexemes(lists:append(ct:capture_get()), "\n"),
    ?assertEqual(0, Code),
    Index = filename:join([Out, "e2e", "index.html"]),
    ?assertEqual(Index, lists:last(Lines)),
    ?assert(filelib:is_regular(filename:join([Out, "e2e", "summary.csv"]))),
    %% Sampling is on by default: the page shows the node under test.
    {ok, Html} = file:read_file(Index),
    [?assertMatch({_, _}, binary:match(Html, Text))
     || Text <- [<<"CPU and schedulers">>, <<"scheduler microstates (msacc)">>,
                 <<"big: CPU % of all cores">>, <<"Lock counting: not available">>,
                 <<"Microstate accounting was on for 10 % of each sampling interval">>]],
    %% Rebuilding from the stored files alone gives the same summary.
    {ok, Before} = file:read_file(filename:join([Out, "e2e", "summary.csv"])),
    ?assertEqual(0, beamscale_cli:dispatch(["report", filename:join(Out, "e2e")])),
    ?assertEqual({ok, Before}, file:read_file(filename:join([Out, "e2e", "summary.csv"]))).

not_a_run_dir() -> [{doc, "report on a directory that is no run, or on none, exits 2."}].
not_a_run_dir(Config) ->
    ?assertEqual(2, beamscale_cli:dispatch(["report", ?config(priv_dir, Config)])),
    ?assertEqual(2, beamscale_cli:dispatch(["report"])).
