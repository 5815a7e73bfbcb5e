%% @doc One simulated user: runs one session's steps and records into the run's metrics.
%%
%% Latency is measured twice: from the request's actual send, and from its intended start. The
%% user keeps an intended clock that starts at its scheduled arrival. A think time is pacing: the
%% next request is intended a think time after the previous one's intended start, so a late reply
%% makes the following requests late rather than rarer (coordinated omission corrected). A request
%% that follows another without a think time is back-to-back: it is intended as soon as the
%% previous one answers, keeping the lateness the user had.
-module(beamscale_load_user).

-export([run/4]).

-type ctx() :: #{metrics := beamscale_load_metrics:metrics(), targets := #{atom() => map()}}.
-export_type([ctx/0]).

%% @doc Run `Session' for a user that was due at monotonic time `Due' (native units).
-spec run(beamscale_load_scenario:session(), ctx(), integer(), rand:state()) -> ok.
run(#{steps := Steps}, #{metrics := M} = Ctx, Due, Rand) ->
    beamscale_load_metrics:incr(M, sessions_started),
    St0 = #{ctx => Ctx, conns => #{}, base => Due, intended => Due, rand => Rand},
    #{conns := Conns} = steps(Steps, St0),
    beamscale_load_metrics:record(M, session, erlang:monotonic_time() - Due),
    beamscale_load_metrics:incr(M, sessions_done),
    maps:foreach(fun({Mod, _}, C) -> beamscale_load_request:close(Mod, C) end, Conns).

steps(Steps, St) -> lists:foldl(fun step/2, St, Steps).

step({request, Mod, Target, Spec, Timeout}, #{ctx := Ctx, conns := Conns} = St) ->
    #{metrics := M, targets := Targets} = Ctx,
    Send = wait_until(maps:get(intended, St)),
    Key = {Mod, Target},
    Intended = min(maps:get(intended, St), Send),
    Result = beamscale_load_request:run(Mod, maps:get(Target, Targets),
                                        maps:get(Key, Conns, closed), {Spec, Timeout}, M),
    End = erlang:monotonic_time(),
    beamscale_load_metrics:incr(M, requests),
    Conn = outcome(M, Result, End - Intended, End - Send),
    St#{conns := Conns#{Key => Conn}, base := Intended, intended := Intended + End - Send};
step({think, Dist}, #{base := Base, rand := R0} = St) ->
    {Ms, R1} = beamscale_load_arrival:think(Dist, R0),
    Next = Base + erlang:convert_time_unit(round(Ms * 1000), microsecond, native),
    wait_until(Next),
    St#{base := Next, intended := Next, rand := R1};
step({loop, N, Steps}, St) -> loop(N, Steps, St);
step({transaction, Name, Steps}, #{ctx := #{metrics := M}} = St) ->
    Start = min(maps:get(intended, St), erlang:monotonic_time()),
    St1 = steps(Steps, St),
    beamscale_load_metrics:record(M, {tx, Name}, erlang:monotonic_time() - Start),
    St1.

%% A counter, not a list of N elements: a loop may run "forever" until the time limit.
loop(0, _Steps, St) -> St;
loop(N, Steps, St) -> loop(N - 1, Steps, steps(Steps, St)).

%% Replies (also error statuses and unexpected results) and timeouts are latencies; a failure to
%% connect or send, or an exception, is not. Every error is counted under its reason.
outcome(M, {ok, Conn}, Corrected, Sent) ->
    latency(M, Corrected, Sent),
    Conn;
outcome(M, {error, Reason, Conn}, Corrected, Sent) ->
    beamscale_load_metrics:error(M, Reason),
    case Reason of
        timeout -> latency(M, Corrected, Sent);
        {status, _} -> latency(M, Corrected, Sent);
        {rpc_error, _} -> latency(M, Corrected, Sent);
        {unexpected, _} -> latency(M, Corrected, Sent);
        _ -> ok
    end,
    Conn.

latency(M, Corrected, Sent) ->
    beamscale_load_metrics:record(M, latency, Corrected),
    beamscale_load_metrics:record(M, sent, Sent).

%% Returns the time it waited until: a request sends at once and needs no other clock read. The
%% unit conversion only when there is a wait (it is an Erlang function, measured costly).
wait_until(T) ->
    Now = erlang:monotonic_time(),
    case T > Now andalso erlang:convert_time_unit(T - Now, native, millisecond) of
        Ms when is_integer(Ms), Ms > 0 -> receive after Ms -> erlang:monotonic_time() end;
        _ -> Now
    end.
