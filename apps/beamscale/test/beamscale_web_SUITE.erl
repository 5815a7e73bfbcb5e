%% The live page (`--web'): a phased `beamscale load' run as a user starts it, its `/live.json'
%% read in each phase and its page rendered by headless Chromium; the server's refusals (other
%% paths, other methods, other Host headers, other addresses) and its port closed after the run.
-module(beamscale_web_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([phased_load_live/1, refusals/1, suite_run_live/1, saturate_live/1, study_live/1,
         slow_clients/1, slow_renders/1]).
-export([phased_load_live/0, refusals/0, suite_run_live/0, saturate_live/0, study_live/0,
         slow_clients/0, slow_renders/0]).

%% A step of the test that waits for the run: bounded, so a run that never gets there fails.
-define(WAIT_MS, 30000).
-define(POLL_MS, 250).
-define(RECV_TIMEOUT_MS, 5000).
%% The run's own end: its phases, drain and the report, with room for a loaded host.
-define(RUN_END_MS, 60000).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [phased_load_live, refusals, suite_run_live, saturate_live, study_live, slow_clients,
          slow_renders].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

%% Two phases (10 then 40 users/s) against an rpc echo node beamscale starts.
phased_load_live() -> [{doc, "/live.json follows the phases; Chromium shows it; port closed."}].
phased_load_live(Config) ->
    Priv = ?config(priv_dir, Config),
    File = filename:join(Priv, "phased.scenario"),
    ok = file:write_file(File,
        "{targets, [{sut, #{start => #{}}}]}.\n"
        "{phases, [{slow, #{duration_s => 4, rate => 10}}, {fast, #{duration_s => 10, "
        "rate => 40}}]}.\n"
        "{sessions, [{s, #{steps => [{rpc, #{call => {beamscale_target_echo, echo, [x]}}}]}}]}.\n"
        "{drain_s, 1}.\n"),
    Cmd = beamscale_test_cli:open(["load", File, "--web", "0", "--quiet", "--out", Priv,
                                   "--name", "live", "--seed", "5"]),
    {Port, Rest} = address(Cmd, <<>>),
    Slow = until(Port, fun(J) -> maps:get(<<"phase">>, J, null) =:= <<"slow">> end),
    Fast = until(Port, fun(J) -> maps:get(<<"phase">>, J, null) =:= <<"fast">> end),
    ct:pal("slow: ~p~nfast: ~p", [maps:get(<<"figures">>, Slow), maps:get(<<"figures">>, Fast)]),
    ?assert(maps:get(<<"offered_per_s">>, Slow) == 10),
    ?assert(maps:get(<<"offered_per_s">>, Fast) == 40),
    ?assertMatch([#{<<"name">> := <<"slow">>, <<"from_s">> := 0, <<"to_s">> := 4},
                  #{<<"name">> := <<"fast">>, <<"from_s">> := 4, <<"to_s">> := 14}],
                 maps:get(<<"phases">>, Fast)),
    ?assert(maps:get(<<"achieved_per_s">>, Fast) > 10),
    dom(Config, Port, maps:get(<<"offered_per_s">>, maps:get(<<"figures">>, Fast))),
    %% Only loopback's 127.0.0.1 answers, and the run still goes on meanwhile.
    [?assertEqual({error, econnrefused}, gen_tcp:connect(A, Port, [], ?RECV_TIMEOUT_MS))
     || A <- [{127, 0, 0, 2} | other_addresses()]],
    {Status, Out} = beamscale_test_cli:wait(Cmd, ?RUN_END_MS),
    ct:log("output: ~ts~ts", [Rest, Out]),
    ?assertEqual(0, Status),
    ?assertEqual({error, econnrefused}, gen_tcp:connect({127, 0, 0, 1}, Port, [])),
    ?assert(filelib:is_regular(filename:join([Priv, "live", "index.html"]))),
    beamscale_test_cli:no_strays().

%% The page in headless Chromium: its script has fetched /live.json at least once and the
%% offered rate it shows is the one /live.json gave.
dom(Config, Port, Offered) ->
    Chromium = case os:find_executable("chromium") of
                   false -> ct:fail("chromium not installed (scripts/install-deps.sh installs it)");
                   C -> C
               end,
    Url = lists:flatten(io_lib:format("http://127.0.0.1:~b/", [Port])),
    Dom = beamscale_test_chromium:run(Chromium, Config,
                                      ["--virtual-time-budget=3000", "--dump-dom", Url]),
    {match, [Updates]} = re:run(Dom, "<body data-updates=\"([0-9]+)\"",
                                [{capture, [1], binary}]),
    ?assert(binary_to_integer(Updates) >= 1),
    {match, [Shown]} = re:run(Dom, "data-key=\"offered_per_s\">([^<]*)<",
                              [{capture, [1], binary}]),
    ct:pal("the page shows offered ~ts after ~ts updates", [Shown, Updates]),
    ?assertEqual(Offered, Shown),
    ?assert(length(beamscale_test_chromium:charts(Dom)) >= 5).

%% The server alone: two paths, GET only, our Host only, malformed requests answered.
refusals() -> [{doc, "Other paths 404, other methods 405, other Host 421, bad request 400."}].
refusals(_Config) ->
    Page = <<"<p>page</p>">>,
    {ok, Web} = beamscale_web:start(#{port => 0, bodies => #{page => Page, json => <<"{}">>}}),
    Port = beamscale_web:port(Web),
    Host = io_lib:format("127.0.0.1:~b", [Port]),
    try
        ?assertMatch({200, Page}, get(Port, "GET / HTTP/1.1\r\nHost: ~ts\r\n\r\n", [Host])),
        ?assertMatch({200, <<"{}">>},
                     get(Port, "GET /live.json HTTP/1.1\r\nHost: ~ts\r\n\r\n", [Host])),
        [?assertMatch({404, _}, get(Port, "GET " ++ P ++ " HTTP/1.1\r\nHost: ~ts\r\n\r\n",
                                    [Host]))
         || P <- ["/x", "/live.json?x=1", "/../etc/passwd", "/index.html"]],
        [?assertMatch({405, _}, get(Port, M ++ " / HTTP/1.1\r\nHost: ~ts\r\n\r\n", [Host]))
         || M <- ["POST", "HEAD", "PUT", "DELETE", "BREW"]],
        ?assertMatch({421, _}, get(Port, "GET / HTTP/1.1\r\nHost: evil.example:~b\r\n\r\n",
                                   [Port])),
        ?assertMatch({421, _}, get(Port, "GET / HTTP/1.0\r\n\r\n", [])),
        ?assertMatch({400, _}, get(Port, "\x01\x02 garbage\r\n\r\n", [])),
        Many = lists:append(["X-A: b\r\n" || _ <- lists:seq(1, 100)]),
        ?assertMatch({431, _}, get(Port, "GET / HTTP/1.1\r\n" ++ Many ++ "\r\n", [])),
        %% A port in use is an error in words, not a crash.
        {error, E} = beamscale_web:start(#{port => Port}),
        ?assertMatch(<<"option --web: cannot listen on 127.0.0.1:", _/binary>>,
                     beamscale_error:format(E))
    after
        ok = beamscale_web:stop(Web)
    end,
    ?assertEqual({error, econnrefused}, gen_tcp:connect({127, 0, 0, 1}, Port, [])).

%% Slow clients (issue 31): 20 connections each sending a request a byte a second held the
%% server's 16 slots and kept the page from answering for 20 s.
slow_clients() -> [{doc, "20 clients sending a byte a second: a normal GET answers in 1 s; "
                         "they are closed by the request deadline."}].
slow_clients(_Config) ->
    {ok, Web} = beamscale_web:start(#{port => 0, bodies => #{page => <<"p">>, json => <<"{}">>}}),
    Port = beamscale_web:port(Web),
    Self = self(),
    Slow = [spawn_link(fun() -> slow_client(Port, Self) end) || _ <- lists:seq(1, 20)],
    try
        [receive {connected, P} -> ok after ?RECV_TIMEOUT_MS -> ct:fail(not_connected) end
         || P <- Slow],
        T0 = erlang:monotonic_time(millisecond),
        ?assertMatch({200, <<"{}">>},
                     get(Port, "GET /live.json HTTP/1.1\r\nHost: 127.0.0.1:~b\r\n\r\n",
                         [Port])),
        Ms = erlang:monotonic_time(millisecond) - T0,
        ct:log("answered in ~b ms beside 20 slow clients", [Ms]),
        ?assert(Ms < 1000),
        %% Each slow one is closed by its deadline (2 s), not left to hold a slot.
        [receive {closed, P} -> ok after ?RECV_TIMEOUT_MS -> ct:fail(not_closed) end
         || P <- Slow]
    after
        [begin unlink(P), exit(P, kill) end || P <- Slow],
        ok = beamscale_web:stop(Web)
    end.

%% Send "GET / HTTP/1.1..." a byte a second until the server closes the connection.
slow_client(Port, Parent) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, true}]),
    Parent ! {connected, self()},
    Request = <<"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
                (binary:copy(<<"a">>, 100))/binary>>,
    slow_send(S, Request, Parent).

slow_send(S, <<B, Rest/binary>>, Parent) ->
    _ = gen_tcp:send(S, <<B>>),
    receive
        {tcp_closed, S} -> Parent ! {closed, self()};
        {tcp, S, _} -> slow_send(S, <<B, Rest/binary>>, Parent)
    after 1000 -> slow_send(S, Rest, Parent)
    end;
slow_send(_S, <<>>, Parent) -> Parent ! {done, self()}.

%%% Helpers

%% A small suite run: the page shows the progress and each point's median within its interval
%% as the iterations come in, before the run ends; the port is closed after.
suite_run_live() -> [{doc, "run --web: progress and medians with intervals while it runs."}].
suite_run_live(Config) ->
    Priv = ?config(priv_dir, Config),
    Cmd = beamscale_test_cli:open(["run", "--bench", "big,bang,ran,mbrot", "--schedulers", "1,2",
                                   "--iterations", "6", "--launches", "1", "--warmups", "0",
                                   "--no-sample",
                                   "--quiet", "--web", "0", "--out", Priv, "--name", "suite"]),
    {Port, _} = address(Cmd, <<>>),
    J = until(Port, fun(#{<<"summary">> := #{<<"results">> := [_ | _]}}) -> true;
                       (_) -> false
                    end),
    #{<<"done">> := Done, <<"expected">> := Expected, <<"state">> := <<"running">>} = J,
    ct:pal("~b of ~b iterations done; figures ~p", [Done, Expected, maps:get(<<"figures">>, J)]),
    ?assertEqual(48, Expected),
    ?assert(Done > 0 andalso Done < Expected),
    [?assert(Lo =< M andalso M =< Hi)
     || #{<<"median">> := M, <<"ci95_low">> := Lo, <<"ci95_high">> := Hi}
            <- maps:get(<<"results">>, maps:get(<<"summary">>, J))],
    ?assertNotEqual(nomatch, binary:match(maps:get(<<"html">>, J), <<"<svg">>)),
    {0, _} = beamscale_test_cli:wait(Cmd, ?RUN_END_MS),
    ?assertEqual({error, econnrefused}, gen_tcp:connect({127, 0, 0, 1}, Port, [])).

%% saturate's levels (20 then 40 users/s) each shown as a run of its own while it runs.
saturate_live() -> [{doc, "saturate --web: each level on the page with its own rate."}].
saturate_live(Config) ->
    Priv = ?config(priv_dir, Config),
    File = filename:join(Priv, "sat.scenario"),
    ok = file:write_file(File,
        "{targets, [{sut, #{start => #{}}}]}.\n"
        "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
        "{sessions, [{s, #{steps => [{rpc, #{call => {beamscale_target_echo, echo, [x]}}}]}}]}.\n"),
    Cmd = beamscale_test_cli:open(["saturate", File, "--web", "0", "--quiet", "--budget", "20s",
                                   "--level", "3s", "--warmup", "1s", "--start", "20",
                                   "--max-rate", "40", "--out", Priv, "--name", "sat"]),
    {Port, _} = address(Cmd, <<>>),
    %% A level's first second on the page: its own label and rate.
    Level = fun(Label, Rate) ->
                    J = until(Port, fun(J) -> maps:get(<<"label">>, J, null) =:= Label andalso
                                                  maps:get(<<"t_s">>, J, 0) >= 1 end),
                    ?assert(maps:get(<<"offered_per_s">>, J) == Rate)
            end,
    Level(<<"saturate: level 20 users/s">>, 20),
    Level(<<"saturate: level 40 users/s">>, 40),
    {0, _} = beamscale_test_cli:wait(Cmd, ?RUN_END_MS),
    ?assertEqual({error, econnrefused}, gen_tcp:connect({127, 0, 0, 1}, Port, [])).

%% The pollset study at its test size (two cells, one level of 20 users/s each): each cell's
%% level is on the page, labelled by cell, with the target node's samples.
study_live() -> [{doc, "The pollset study's levels are shown live, sampled node included."}].
study_live(Config) ->
    {ok, Web} = beamscale_web:start(#{port => 0}),
    Port = beamscale_web:port(Web),
    %% Its own name: CT's priv_dir is shared by the suites of a run, and the smp-io suite's
    %% pollset run is "poll" (a rerun there would resume, with no level left to show).
    Opts = #{version => short, name => "poll_live", quiet => true, seed => 7, web => Web,
             out => filename:join(?config(priv_dir, Config), "runs")},
    Me = self(),
    {Pid, Ref} = spawn_monitor(fun() -> Me ! {self(), beamscale_study_pollset:run(Opts, test)} end),
    try
        J = until(Port, fun(J) -> maps:get(<<"t_s">>, J, 0) >= 1 end),
        ct:pal("label ~ts, figures ~p", [maps:get(<<"label">>, J), maps:get(<<"figures">>, J)]),
        ?assertMatch({_, _}, binary:match(maps:get(<<"label">>, J), <<"level=1">>)),
        %% The level's one phase (its first second may be gone by the time of reading: drain).
        [#{<<"rate">> := Rate, <<"from_s">> := 0}] = maps:get(<<"phases">>, J),
        ?assert(Rate == 20),
        receive {Pid, Result} -> ?assertMatch({ok, _}, Result);
                {'DOWN', Ref, process, Pid, Why} -> ct:fail({study_crashed, Why})
        after ?RUN_END_MS -> ct:fail(study_not_done)
        end,
        demonitor(Ref, [flush]),
        %% The second cell's level was shown too, with the node's samples read live.
        Last = until(Port, fun(_) -> true end),
        ?assertMatch({_, _}, binary:match(maps:get(<<"label">>, Last), <<"io_t2_p2">>)),
        ?assertMatch([_ | _], maps:get(<<"target">>, Last))
    after
        ok = beamscale_web:stop(Web)
    end.

%% The first line of the command's output is the live page's address.
address(Cmd, Acc) ->
    case binary:split(Acc, <<"\n">>) of
        [Line, Rest] ->
            case re:run(Line, "^live page: http://127\\.0\\.0\\.1:([0-9]+)/$",
                        [{capture, [1], binary}]) of
                {match, [P]} -> {binary_to_integer(P), Rest};
                nomatch -> ct:fail({first_line_not_the_address, Line})
            end;
        [_] ->
            receive {Cmd, {data, D}} -> address(Cmd, <<Acc/binary, D/binary>>);
                    {Cmd, {exit_status, S}} -> ct:fail({exited, S, Acc})
            after ?WAIT_MS -> ct:fail({no_address, Acc})
            end
    end.

%% /live.json polled until `Pred' holds of it, within ?WAIT_MS.
until(Port, Pred) -> until(Port, Pred, erlang:monotonic_time(millisecond) + ?WAIT_MS).

until(Port, Pred, Deadline) ->
    {200, Body} = get(Port, "GET /live.json HTTP/1.1\r\nHost: 127.0.0.1:~b\r\n\r\n", [Port]),
    {ok, J} = beamscale_format_json:decode(Body),
    case Pred(J) of
        true -> J;
        false ->
            ?assert(erlang:monotonic_time(millisecond) < Deadline),
            timer:sleep(?POLL_MS),
            until(Port, Pred, Deadline)
    end.

%% Renders slower than the figures come (a load's page on a busy host): 30 seconds fed while
%% each render takes 300 ms. The server answers at once, one render runs at a time, the 29 that
%% came during the first make one render more (not 29), and the page shows the last state.
slow_renders() -> [{doc, "One render at a time, no backlog; requests get the last render."}].
slow_renders(_Config) ->
    {ok, Web} = beamscale_web:start(#{port => 0}),
    Port = beamscale_web:port(Web),
    Running = atomics:new(2, []),
    Renders = counters:new(1, []),
    Render = fun(N) ->
                     Now = atomics:add_get(Running, 1, 1),
                     atomics:put(Running, 2, max(Now, atomics:get(Running, 2))),
                     timer:sleep(300),
                     atomics:sub(Running, 1, 1),
                     counters:add(Renders, 1, 1),
                     #{page => integer_to_list(N), json => io_lib:format("{\"n\":~b}", [N])}
             end,
    Update = fun(undefined) -> 1; (N) -> N + 1 end,
    [beamscale_web:feed(Web, Update, Render) || _ <- lists:seq(1, 30)],
    %% The server is not busy rendering: it answers a call before the first render ends (it
    %% rendered all 30 in turn first, 9 s, when the renders ran in it).
    Port = beamscale_web:port(Web),
    ?assertEqual(0, counters:get(Renders, 1)),
    Last = until(Port, fun(J) -> maps:get(<<"n">>, J, 0) =:= 30 end),
    ct:pal("last: ~p after ~b renders", [Last, counters:get(Renders, 1)]),
    ?assertEqual(1, atomics:get(Running, 2)),
    %% The first, then one of the latest state (a third if the updates were slower than one
    %% render, on a very loaded host).
    ?assert(lists:member(counters:get(Renders, 1), [2, 3])),
    ?assertEqual({200, <<"30">>}, get(Port, "GET / HTTP/1.1\r\nHost: 127.0.0.1:~b\r\n\r\n",
                                      [Port])),
    beamscale_web:stop(Web).

%% One request as raw bytes; the status and body of the answer (the server closes after it).
get(Port, Fmt, Args) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, false}]),
    ok = gen_tcp:send(S, io_lib:format(Fmt, Args)),
    Resp = recv_all(S, <<>>),
    [Head, Body] = binary:split(Resp, <<"\r\n\r\n">>),
    <<"HTTP/1.1 ", Code:3/binary, _/binary>> = Head,
    {binary_to_integer(Code), Body}.

recv_all(S, Acc) ->
    case gen_tcp:recv(S, 0, ?RECV_TIMEOUT_MS) of
        {ok, D} -> recv_all(S, <<Acc/binary, D/binary>>);
        {error, closed} -> gen_tcp:close(S), Acc;
        {error, Reason} -> ct:fail({recv, Reason, Acc})
    end.

%% This host's addresses other than loopback (IPv4): the server must not answer there.
other_addresses() ->
    {ok, Ifs} = inet:getifaddrs(),
    [A || {_, Opts} <- Ifs, {addr, {X, _, _, _} = A} <- Opts, X =/= 127].
