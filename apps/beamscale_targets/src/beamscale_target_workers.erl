%% @doc A server whose capacity is known in advance, for testing `beamscale saturate': `K' worker
%% processes, each holding a request for a fixed service time (`timer:sleep/1'), so the server
%% completes at most K / service time requests a second whatever the CPU does (4 workers of
%% 20 ms: 200/s). Requests beyond that wait in the dispatcher's queue, first come first served.
%%
%% Stalls can be added, like a stop-the-world collection whose pause grows with the garbage:
%% every `period_ms' the dispatcher sleeps `pause_us' for each request since the last stall, so
%% no request starts meanwhile. Pauses grow with the rate, so the tail latency breaks an
%% objective well below the throughput the workers allow, while every request still completes.
%%
%% Start it on the node under test with the scenario's `init' (`start/2,3'); load it with
%% `rpc' calls of `request/0'.
-module(beamscale_target_workers).

-export([start/2, start/3, stop/0, request/0]).

-define(NAME, ?MODULE).
%% A request that waits this long for its worker is answered with an error, so a caller that
%% gave up is never blocked for ever.
-define(REPLY_TIMEOUT, 30000).
-define(STOP_TIMEOUT, 5000).

%% @doc Start the server (replacing one already running) with `K' workers of `ServiceMs' each.
-spec start(pos_integer(), non_neg_integer()) -> ok.
start(K, ServiceMs) -> start(K, ServiceMs, #{}).

%% @doc As `start/2', with stalls (see the module doc; both keys or neither).
-spec start(pos_integer(), non_neg_integer(),
            #{period_ms => pos_integer(), pause_us => non_neg_integer()}) -> ok.
start(K, ServiceMs, Stall) when is_integer(K), K > 0, is_integer(ServiceMs), ServiceMs >= 0 ->
    ok = stop(),
    Caller = self(),
    %% Not linked: the process that calls start/3 (an erpc call) ends right after.
    Pid = spawn(fun() ->
                        true = register(?NAME, self()),
                        Caller ! {?NAME, started},
                        Me = self(),
                        Workers = [spawn_link(fun() -> worker(Me, ServiceMs) end)
                                   || _ <- lists:seq(1, K)],
                        arm(Stall),
                        dispatch(#{free => Workers, queue => queue:new(), n => 0,
                                   stall => Stall})
                end),
    receive {?NAME, started} -> ok
    after ?STOP_TIMEOUT -> exit(Pid, kill), error(not_started)
    end.

%% @doc Stop the server if it runs.
-spec stop() -> ok.
stop() ->
    case whereis(?NAME) of
        undefined -> ok;
        Pid ->
            Ref = monitor(process, Pid),
            exit(Pid, kill),
            receive {'DOWN', Ref, process, Pid, _} -> ok
            after ?STOP_TIMEOUT -> ok
            end
    end.

%% @doc One request: wait for a worker, which holds it for the service time.
-spec request() -> ok.
request() ->
    Ref = make_ref(),
    _ = case whereis(?NAME) of
            undefined -> error(not_running);
            Pid -> Pid ! {request, self(), Ref}
        end,
    receive {Ref, done} -> ok
    after ?REPLY_TIMEOUT -> error(timeout)
    end.

dispatch(#{free := Free, queue := Q} = St) ->
    receive
        {request, From, Ref} ->
            case Free of
                [W | Ws] -> dispatch(started(W, {From, Ref}, St#{free := Ws}));
                [] -> dispatch(St#{queue := queue:in({From, Ref}, Q)})
            end;
        {free, W} ->
            case queue:out(Q) of
                {{value, Job}, Q1} -> dispatch(started(W, Job, St#{queue := Q1}));
                {empty, _} -> dispatch(St#{free := [W | Free]})
            end;
        stall ->
            #{n := N, stall := #{pause_us := P} = Stall} = St,
            timer:sleep(N * P div 1000),
            arm(Stall),
            dispatch(St#{n := 0})
    end.

arm(#{period_ms := T, pause_us := _}) -> _ = erlang:send_after(T, self(), stall), ok;
arm(_) -> ok.

started(W, Job, #{n := N} = St) ->
    W ! {job, Job},
    St#{n := N + 1}.

worker(Dispatcher, ServiceMs) ->
    receive
        {job, {From, Ref}} ->
            timer:sleep(ServiceMs),
            From ! {Ref, done},
            Dispatcher ! {free, self()},
            worker(Dispatcher, ServiceMs)
    end.
