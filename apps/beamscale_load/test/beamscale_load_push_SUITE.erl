%% Pushed data (beamscale_load_push): a real TCP server on 127.0.0.1 sends bytes unasked while
%% a `bidi' user thinks; the raw kind's push callback takes them (counted under `pushed', not
%% left to acknowledge the next request), and a `wait' step ends at a push or fails with its
%% named reason.
-module(beamscale_load_push_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([pushed_during_think/1, wait_times_out/1, wait_gets_push/1]).
-export([pushed_during_think/0, wait_times_out/0, wait_gets_push/0]).

-import(beamscale_load_servers, [scenario/1, run/1]).

%% The server's delay before its answer to a second request (ms): a reply already buffered
%% would acknowledge that request at once.
-define(LATE_MS, 300).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [pushed_during_think, wait_times_out, wait_gets_push].

%% A server: answers `a' with `ok' then pushes 3 times 5 bytes, 30 ms apart; answers `b'
%% ?LATE_MS later; `w' (a wait's cue, sent no_ack) with one push after 50 ms; never pushes
%% otherwise.
server() ->
    {_L, Port, Pid} = beamscale_load_servers:broker(fun serve/1),
    {Pid, Port}.

serve(S) ->
    case gen_tcp:recv(S, 1) of
        {ok, <<"a">>} ->
            ok = gen_tcp:send(S, <<"ok">>),
            [begin timer:sleep(30), gen_tcp:send(S, <<"push!">>) end || _ <- [1, 2, 3]],
            serve(S);
        {ok, <<"b">>} -> timer:sleep(?LATE_MS), gen_tcp:send(S, <<"ok">>), serve(S);
        {ok, <<"w">>} -> timer:sleep(50), gen_tcp:send(S, <<"push!">>), serve(S);
        {ok, _} -> serve(S);
        _ -> gen_tcp:close(S)
    end.

stop(Pid) -> exit(Pid, kill).

session(Port, Steps) ->
    scenario(io_lib:format(
               "{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n"
               "{phases, [{p, #{duration_s => 1, rate => 20}}]}.\n"
               "{sessions, [{s, #{bidi => true, steps => ~ts}}]}.\n", [Port, Steps])).

pushed_during_think() ->
    [{doc, "Bytes pushed during a bidi think go to raw's callback: counted, not buffered."}].
pushed_during_think(_Config) ->
    {Pid, Port} = server(),
    try
        #{total := T} = run(session(Port, "[{raw, #{data => <<\"a\">>}}, {think, 400}, "
                                          "{raw, #{data => <<\"b\">>}}]")),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 5),
        ?assertEqual(0, maps:get(errors, T)),
        %% TCP may join two pushes into one message: each message is one push.
        Pushed = maps:get(<<"pushed">>, maps:get(counts, T)),
        ?assert(Pushed >= Done andalso Pushed =< 3 * Done),
        %% Every pushed byte went through the callback (which counts it as received).
        ?assertEqual((2 + 15 + 2) * Done, maps:get(bytes_received, T)),
        %% Every `b' waited for its own late answer: the pushes were not left in the buffer.
        Latency = maps:get(latency, T),
        ?assert(beamscale_stats_hist:percentile(Latency, 60) >= (?LATE_MS - 50) * 1000)
    after
        stop(Pid)
    end.

wait_times_out() -> [{doc, "A wait step with no push fails with its named reason."}].
wait_times_out(_Config) ->
    {Pid, Port} = server(),
    try
        #{total := T} = run(session(Port, "[{raw, #{data => <<\"x\">>, ack => no_ack}}, "
                                          "{wait, #{kind => raw, timeout_ms => 200}}]")),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 5),
        ?assertEqual(Done, maps:get(errors, T)),
        ?assertEqual(#{<<"no pushed message within 200 ms">> => Done}, maps:get(reasons, T))
    after
        stop(Pid)
    end.

wait_gets_push() -> [{doc, "A wait step ends at the push it waits for, without error."}].
wait_gets_push(_Config) ->
    {Pid, Port} = server(),
    try
        #{total := T} = run(session(Port, "[{raw, #{data => <<\"w\">>, ack => no_ack}}, "
                                          "{wait, #{kind => raw, timeout_ms => 5000}}]")),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 5),
        ?assertEqual(0, maps:get(errors, T)),
        ?assertEqual(Done, maps:get(<<"pushed">>, maps:get(counts, T)))
    after
        stop(Pid)
    end.
