%% A load run end to end (`beamscale_loadtest'): the target node sampled into samples.csv, the
%% run directory and its index.html rendered by headless Chromium, `beamscale report' on it, and
%% the load split over two load nodes whose figures are merged.
-module(beamscale_loadtest_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([sampled_run_and_report/1, two_load_nodes/1, load_node_time_limit/1,
         stalled_load_node/1, stalled_executor_node/1,
         stalled_closed_node/1, load_nodes_apart/1]).
-export([sampled_run_and_report/0, two_load_nodes/0, load_node_time_limit/0,
         stalled_load_node/0, stalled_executor_node/0,
         stalled_closed_node/0, load_nodes_apart/0]).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [sampled_run_and_report, two_load_nodes, load_node_time_limit, stalled_load_node,
          stalled_executor_node, stalled_closed_node, load_nodes_apart].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

scenario(Config, Text) -> beamscale_test_load:scenario(Config, "test.scenario", Text).

%% A node beamscale starts (sampled) and a host:port server (nothing to sample).
sampled_run_and_report() -> [{doc, "The target is sampled; report rebuilds alike; renders."}].
sampled_run_and_report(Config) ->
    {ok, Srv} = beamscale_target_http:start(#{}),
    Port = beamscale_target_http:port(Srv),
    Dir = filename:join(?config(priv_dir, Config), "run"),
    try
        S = scenario(Config, io_lib:format(
            "{targets, [{sut, #{start => #{init => {beamscale_target_echo, noop, []}}}},\n"
            "           {web, #{address => \"127.0.0.1:~b\"}}]}.\n"
            "{phases, [{one, #{duration_s => 1, rate => 20}}, {two, #{duration_s => 2, "
            "rate => 40}}]}.\n"
            "{sessions, [{s, #{steps => [{loop, 3, [{rpc, #{target => sut, call => "
            "{beamscale_target_echo, work, [2000]}}}, {http, #{target => web, label => home}}, "
            "{think, 20}]}]}}]}.\n{drain_s, 2}.\n", [Port])),
        {ok, Dir, _} = beamscale_loadtest:run(S, #{dir => Dir, quiet => true, seed => 7,
                                                 msacc => 50}),
        Samples = beamscale_store:read_rows(filename:join(Dir, "samples.csv")),
        Ok = [R || #{status := <<"ok">>} = R <- Samples],
        ?assert(length(Ok) >= 3),
        ?assertEqual([<<"bs_sut">>], lists:usort([binary:part(N, 0, 6) || #{node := N} <- Ok])),
        Phases = lists:usort([A || #{args := A} <- Ok]),
        ?assert(lists:member(<<"one">>, Phases) andalso lists:member(<<"two">>, Phases)),
        ?assert(length(beamscale_store:read_rows(filename:join(Dir, "load.csv"))) >= 3),
        by_name(Dir),
        pages(Dir),
        {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
        ?assertMatch({_, _}, binary:match(Html, <<"is host:port: no node to sample">>)),
        ?assertMatch({_, _}, binary:match(Html, <<"was on for 50 % of each sampling">>)),
        %% The report is rebuilt from the stored files alone, the same.
        ?assertEqual(0, beamscale_cli:dispatch(["report", Dir])),
        ?assertEqual({ok, Html}, file:read_file(filename:join(Dir, "index.html"))),
        renders(Config, Dir)
    after
        beamscale_target_http:stop(Srv)
    end.

%% requests.csv: a row a request name (the label; the rpc kind and its type), the counts of each as
%% many as the run's requests; the page's table has the same names.
by_name(Dir) ->
    Rows = beamscale_store:read_rows(filename:join(Dir, "requests.csv")),
    ?assertEqual([<<"home">>, <<"rpc call">>], [N || #{name := N} <- Rows]),
    #{<<"requests">> := Total} = beamscale_test_load:json(Dir, "summary.json"),
    [#{requests := Home, bytes_received := Bytes, p99_ms := P99}, #{requests := Rpc}] = Rows,
    ?assertEqual(Home, Rpc),
    ?assertEqual(Total, binary_to_integer(Home) + binary_to_integer(Rpc)),
    ?assert(binary_to_integer(Bytes) > 0 andalso binary_to_float(P99) > 0),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertMatch({_, _}, binary:match(Html, <<"By request name">>)).

%% Tsung's pages: each of the 3 loops (an rpc and an http request, then a think) is one, its
%% time at least its two requests' latencies from the send.
pages(Dir) ->
    #{<<"sessions_done">> := Done, <<"page_time">> := #{<<"count">> := Pages} = Page,
      <<"latency_uncorrected">> := #{<<"min_ms">> := Min}} =
        beamscale_test_load:json(Dir, "summary.json"),
    ?assertEqual(3 * Done, Pages),
    ?assert(maps:get(<<"min_ms">>, Page) >= 2 * Min).

%% Every chart draws its series: the load charts (connect time and connections open: the http
%% steps connect; page time and pages per second, Tsung's page; users in flight and bytes per
%% second, the HTTP steps counting bytes), replies by status (200 only), p99 and requests by
%% request name (2 names), the latency distribution
%% (corrected and uncorrected), then CPU
%% (OS CPU, utilisation, busy-wait of the one node) and the 7 msacc states.
renders(Config, Dir) ->
    case os:find_executable("chromium") of
        false -> ct:fail("chromium not installed (scripts/install-deps.sh installs it)");
        Chromium ->
            Index = filename:join(Dir, "index.html"),
            Dom = beamscale_test_chromium:run(Chromium, Config,
                                              ["--dump-dom", beamscale_test_chromium:url(Index)]),
            Summary = beamscale_test_load:json(Dir, "summary.json"),
            Expected = [length(Series)
                        || {_, _, _, Series} <- beamscale_report_load:graphs(Summary)]
                ++ [2, 3, 7],
            ?assertEqual([5, 3, 3, 1, 2, 3, 3, 1, 1, 1, 2, 1, 2, 2, 2, 3, 7], Expected),
            Charts = beamscale_test_chromium:charts(Dom),
            ?assertEqual(Expected, [beamscale_test_chromium:series(C) || C <- Charts]),
            [?assert(binary:match(C, [<<"<polyline">>, <<"<rect x">>]) =/= nomatch)
             || C <- Charts],
            Shot = beamscale_test_chromium:screenshot(Chromium, Config, Index),
            ?assert(filelib:file_size(Shot) > 20000),
            totals_on_the_first_screen(Chromium, Config, Index)
    end.

%% The totals table is on the first screen of a 1280x800 window: its top under 800 px as
%% Chromium lays the page out. The page has no script; a copy with one appended reads the
%% offset into the DOM that --dump-dom prints.
totals_on_the_first_screen(Chromium, Config, Index) ->
    {ok, Html} = file:read_file(Index),
    Probe = filename:join(?config(priv_dir, Config), "totals_probe.html"),
    Script = <<"<script>for (const h of document.querySelectorAll('h2'))"
               " if (h.textContent === 'Totals') document.body.setAttribute('data-totals-top',"
               " Math.round(h.parentNode.querySelector('table').getBoundingClientRect().top));"
               "</script>">>,
    ok = file:write_file(Probe, [Html, Script]),
    Dom = beamscale_test_chromium:run(Chromium, Config,
                                      ["--window-size=1280,800", "--dump-dom",
                                       beamscale_test_chromium:url(Probe)]),
    {match, [Top]} = re:run(Dom, "data-totals-top=\"([0-9]+)\"", [{capture, [1], binary}]),
    ct:log("totals table top: ~s px", [Top]),
    ?assert(binary_to_integer(Top) < 800).

%% 2 load nodes share 100 users/s for 3 s against an rpc echo node: the total offered rate is
%% reached, the rows are the merge of both nodes' figures, and the load nodes are gone after.
two_load_nodes() -> [{doc, "Two load nodes reach the offered rate, merged; gone after."}].
two_load_nodes(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "two"),
    S = scenario(Config,
                 "{targets, [{sut, #{start => #{}}}]}.\n"
                 "{phases, [{p, #{duration_s => 3, rate => 100}}]}.\n"
                 "{sessions, [{s, #{steps => [{loop, 5, [{rpc, #{call => "
                 "{beamscale_target_echo, echo, [x]}}}]}]}}]}.\n"
                 "{load_nodes, 2}.\n{sample, []}.\n{drain_s, 3}.\n"),
    {ok, Dir, _} = beamscale_loadtest:run(S, #{dir => Dir, quiet => true, seed => 3}),
    Sum = beamscale_test_load:json(Dir, "summary.json"),
    #{<<"sessions_started">> := Started, <<"sessions_done">> := Done,
      <<"requests">> := Req, <<"errors">> := 0, <<"load_nodes">> := Nodes} = Sum,
    ct:pal("started ~b sessions (offered 300), per node ~p", [Started, Nodes]),
    ?assert(Started > 240 andalso Started < 360),
    ?assertEqual(Started, Done),
    ?assertEqual(5 * Done, Req),
    ?assertEqual(2, length(Nodes)),
    Me = atom_to_binary(node()),
    [?assertNotEqual(Me, N) || #{<<"node">> := N} <- Nodes],
    [?assert(maps:get(<<"sessions_started">>, N) > 80) || N <- Nodes],
    [?assertEqual(maps:get(K, Sum), lists:sum([maps:get(K, N) || N <- Nodes]))
     || K <- [<<"sessions_started">>, <<"sessions_done">>, <<"requests">>]],
    %% The rows are the merged figures: their counts add up to the totals.
    Rows = maps:get(<<"per_second">>, Sum),
    ?assertEqual(Req, lists:sum([maps:get(<<"requests">>, R) || R <- Rows])),
    ?assertEqual(Req, maps:get(<<"count">>, maps:get(<<"latency_corrected">>, Sum))),
    Run = beamscale_test_load:json(Dir, "run.json"),
    ?assertEqual(2, length(maps:get(<<"load_nodes">>, Run))),
    ?assertEqual(3, maps:get(<<"seed">>, Run)),
    [?assertNot(lists:member(binary_to_atom(N), nodes())) || #{<<"node">> := N} <- Nodes].

%% Users that would think for a minute on a load node are stopped at the hard limit, and the load
%% node is gone after (no longer registered with epmd).
load_node_time_limit() -> [{doc, "Load node users stop at the time limit; node gone."}].
load_node_time_limit(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "limit"),
    S = scenario(Config,
                 "{targets, [{sut, #{start => #{}}}]}.\n"
                 "{phases, [{p, #{duration_s => 1, rate => 20}}]}.\n"
                 "{sessions, [{s, #{steps => [{rpc, #{call => {erlang, node, []}}}, "
                 "{think, 60000}]}}]}.\n{load_nodes, 1}.\n{time_limit_s, 2}.\n"),
    T0 = erlang:monotonic_time(millisecond),
    {ok, Dir, _} = beamscale_loadtest:run(S, #{dir => Dir, quiet => true}),
    ?assert(erlang:monotonic_time(millisecond) - T0 < 30000),
    Sum = beamscale_test_load:json(Dir, "summary.json"),
    ?assertMatch(#{<<"stopped">> := <<"time_limit">>, <<"sessions_done">> := 0}, Sum),
    ?assert(maps:get(<<"requests">>, Sum) > 5),
    [#{<<"node">> := Node}] = maps:get(<<"load_nodes">>, Sum),
    [Name, _] = binary:split(Node, <<"@">>),
    ?assertNot(lists:member(binary_to_list(Name), beamscale_test_load:epmd_names())).

%% The load node SIGSTOPped for 3 s in a 6 s phase at 20 users/s (issue 55): its users due
%% meanwhile are counted late, not started in a burst on SIGCONT; the run goes on and ends. The
%% stall is an event of the run: its node, when, how long and its late users in summary.json,
%% the page's events (in Chromium's DOM) and a closing line.
stalled_load_node() ->
    [{doc, "A load node stopped 3 s: late users counted, no burst; the stall an event."}].
stalled_load_node(Config) ->
    {Node, Pid, Dir, Sum} = stalled_run(Config, "stalled", "duration_s => 6, rate => 20"),
    #{<<"sessions_started">> := Started, <<"sessions_late">> := Late} = Sum,
    ct:pal("load node ~s (OS pid ~s) stopped 3 s: ~b sessions started, ~b late (offered 120)",
           [Node, Pid, Started, Late]),
    %% About 40 users are due over a second before SIGCONT (2 s of 3, at 20/s).
    ?assert(Late >= 15, Late),
    ?assert(Started + Late > 80 andalso Started + Late < 160, {Started, Late}),
    %% No second started more users than the rate allows (a burst of ~60 on resume did).
    no_burst(Sum, 20),
    stall_event(Dir, atom_to_binary(Node), Late, Sum),
    stall_shown(Config, Dir, atom_to_binary(Node)).

%% As stalled_load_node, in a k6 executor's phase at 20 iterations/s: an iteration due over a
%% second before its launcher ran again is dropped (k6's: it could not start on time) and
%% counted late, both.
stalled_executor_node() ->
    [{doc, "A load node stopped 3 s in a constant_arrival_rate phase: its late iterations "
      "dropped and counted late, no burst on resume; the stall an event."}].
stalled_executor_node(Config) ->
    {Node, _, Dir, Sum} = stalled_run(Config, "stalled_exec",
                                      "executor => constant_arrival_rate, rate => 20, "
                                      "duration_s => 6, pre_allocated => 100"),
    #{<<"sessions_started">> := Started, <<"sessions_late">> := Late,
      <<"counts">> := Counts} = Sum,
    #{<<"offered_iterations">> := Offered, <<"dropped_iterations">> := Dropped} = Counts,
    ct:pal("~b offered, ~b started, ~b dropped of which ~b late", [Offered, Started, Dropped,
                                                                   Late]),
    ?assertEqual(120, Offered),
    ?assertEqual(Offered, Started + Dropped),
    %% About 40 iterations are due over a second before SIGCONT (2 s of 3, at 20/s); users
    %% enough (never 100 in flight), so every dropped one was late: none of them started.
    ?assert(Late >= 15, Late),
    ?assertEqual(Late, Dropped),
    stall_event(Dir, atom_to_binary(Node), Late, Sum),
    no_burst(Sum, 20),
    stall_shown(Config, Dir, atom_to_binary(Node)).

%% A closed executor's users run back to back: nothing is owed on resume, none is late; its
%% check of the users every 100 ms, over a second late, is the stall's event all the same.
stalled_closed_node() ->
    [{doc, "A load node stopped 3 s in a ramping_users phase: a stall event of its node, "
      "no user counted late."}].
stalled_closed_node(Config) ->
    {Node, _, Dir, Sum} = stalled_run(Config, "stalled_closed",
                                      "executor => ramping_users, start_users => 4, "
                                      "stages => [{6, 4}]"),
    ?assertEqual(0, maps:get(<<"sessions_late">>, Sum)),
    [Stall] = [E || #{<<"lasted_s">> := _} = E <- maps:get(<<"events">>, Sum)],
    ct:pal("stall event: ~p", [Stall]),
    Name = atom_to_binary(Node),
    #{<<"node">> := Name, <<"lasted_s">> := Lasted, <<"late">> := 0, <<"event">> := Text} = Stall,
    ?assert(Lasted > 2.0 andalso Lasted < 6.0, Lasted),
    ?assertMatch({match, _}, re:run(Text, ["^load node ", Name, " stalled [0-9.]+ s: its "
                                           "users run back to back, none late$"])),
    {ok, Csv} = file:read_file(filename:join(Dir, "events.csv")),
    ?assertMatch({_, _}, binary:match(Csv, Text)).

%% A run of one phase (`Phase', its options) on one load node, SIGSTOPped 3 s into it: the
%% node, its OS pid, the run's directory and its summary.json.
stalled_run(Config, Name, Phase) ->
    Dir = filename:join(?config(priv_dir, Config), Name),
    S = scenario(Config,
                 ["{targets, [{sut, #{start => #{}}}]}.\n{phases, [{p, #{", Phase, "}}]}.\n"
                  "{sessions, [{s, #{steps => [{rpc, #{call => {erlang, node, []}}}]}}]}.\n"
                  "{load_nodes, 1}.\n{sample, []}.\n{drain_s, 3}.\n"]),
    Before = nodes(),
    Me = self(),
    Stopper = spawn_link(fun() -> Me ! {stopped, stop_a_new_node(Before)} end),
    %% Not quiet: the closing lines are captured (the live line too, left aside).
    ct:capture_start(),
    {ok, Dir, _} = try beamscale_loadtest:run(S, #{dir => Dir, seed => 5})
                   after ct:capture_stop()
                   end,
    {Node, Pid} = receive {stopped, P} -> P after 30000 -> ct:fail(no_stop) end,
    unlink(Stopper),
    {Node, Pid, Dir, beamscale_test_load:json(Dir, "summary.json")}.

%% No second's row started more than two seconds' arrivals and a margin: on resume, the
%% iterations due less than a second before start at once (at most a second's), beside those
%% of the second (a stopped node's reports all land in the row collected when it resumes, so the
%% row is not the second they started in). A burst of the late ones would be ~60 more.
no_burst(Sum, Rate) ->
    Rows = maps:get(<<"per_second">>, Sum),
    Started = [maps:get(<<"sessions_started">>, R, 0) || R <- Rows],
    ct:pal("sessions started, row by row: ~w", [Started]),
    ?assert(lists:max(Started) =< 2 * Rate + 5, Started).

%% One stall event, of the stopped node: began within the phase, lasted about the 3 s it was
%% stopped (what was recorded, not how long the test took), all the late users its.
stall_event(Dir, Node, Late, Sum) ->
    [Stall] = [E || #{<<"lasted_s">> := _} = E <- maps:get(<<"events">>, Sum)],
    ct:pal("stall event: ~p", [Stall]),
    #{<<"node">> := Node, <<"t_s">> := At, <<"lasted_s">> := Lasted, <<"late">> := Late,
      <<"event">> := Text} = Stall,
    ?assert(Lasted > 2.0 andalso Lasted < 6.0, Lasted),
    ?assert(At >= 0.0 andalso At < 6.0, At),
    ?assertMatch({_, _}, binary:match(Text, <<"load node ", Node/binary, " stalled">>)),
    {ok, Csv} = file:read_file(filename:join(Dir, "events.csv")),
    ?assertMatch({_, _}, binary:match(Csv, Text)),
    Lines = [L || L <- string:lexemes(iolist_to_binary(ct:capture_get([])), "\n"),
                  string:prefix(L, "load node") =/= nomatch],
    ?assertMatch([_], Lines),
    ?assertMatch({match, _}, re:run(hd(Lines), ["^load node ", Node, " stalled [0-9.]+ s: ",
                                                integer_to_binary(Late), " users due"])).

%% The page shows it as Chromium renders it: a row of its events' table, a mark on the charts.
stall_shown(Config, Dir, Node) ->
    case os:find_executable("chromium") of
        false -> ct:fail("chromium not installed (scripts/install-deps.sh installs it)");
        Chromium ->
            Dom = beamscale_test_chromium:run(
                    Chromium, Config,
                    ["--dump-dom", beamscale_test_chromium:url(filename:join(Dir, "index.html"))]),
            [_, Events] = binary:split(Dom, <<"<h2>Events</h2>">>),
            [Table | _] = binary:split(Events, <<"</table>">>),
            ?assertMatch({_, _}, binary:match(Table, <<"load node ", Node/binary, " stalled">>)),
            ?assertMatch({match, _}, re:run(Dom, ">stall [0-9.]+ s</text>"))
    end.

%% Load nodes here run with -connect_all false, as those on other hosts: each reaches this
%% node, not the others. With the full mesh each came to know the other within about a second
%% (watched here for 3 s), and one that died had the others print global's report of failing
%% to reach it.
load_nodes_apart() -> [{doc, "Two load nodes here: -connect_all false, they never meet."}].
load_nodes_apart(_Config) ->
    {ok, Handles} = beamscale_loadtest_nodes:start(2, []),
    try
        [A, B] = [N || #{node := N} <- Handles],
        [?assertEqual({ok, [["false"]]}, erpc:call(N, init, get_argument, [connect_all]))
         || N <- [A, B]],
        apart(A, B, 30)
    after
        beamscale_loadtest_nodes:stop(Handles)
    end.

apart(_A, _B, 0) -> ok;
apart(A, B, N) ->
    [begin
         Known = erpc:call(X, erlang, nodes, []),
         ?assert(lists:member(node(), Known), Known),
         ?assertNot(lists:member(Other, Known), Known)
     end || {X, Other} <- [{A, B}, {B, A}]],
    timer:sleep(100),
    apart(A, B, N - 1).

%% The load node that appears after `Before', 1.5 s after: SIGSTOP for 3 s, then SIGCONT.
stop_a_new_node(Before) ->
    [Node | _] = wait_new_nodes(Before, 600),
    OsPid = rpc:call(Node, os, getpid, []),
    timer:sleep(1500),
    "" = os:cmd("kill -STOP " ++ OsPid),
    timer:sleep(3000),
    "" = os:cmd("kill -CONT " ++ OsPid),
    {Node, OsPid}.

wait_new_nodes(_Before, 0) -> error(no_load_node);
wait_new_nodes(Before, N) ->
    %% Load nodes are named bs_loadK_... (beamscale_node), the target's node otherwise.
    case [Node || Node <- nodes() -- Before, lists:prefix("bs_load", atom_to_list(Node))] of
        [] -> timer:sleep(50), wait_new_nodes(Before, N - 1);
        New -> New
    end.
