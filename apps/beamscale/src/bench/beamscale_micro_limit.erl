%% @doc A point's measure in a process of its own, so that a benchmark that never returns (or a
%% busy loop) ends at the point's limit: its node is killed (it may not heed a stop) and the
%% limit reached said, `expr' (the point's) or `command' (the whole command's deadline).
-module(beamscale_micro_limit).

-export([run/3]).

%% @doc `Measure()' as `{ok, Value}' (or its thrown `{error, _}'), or `{time_limit, Which}'
%% after the node of OS pid `OsPid' was killed.
-spec run(#{expr_ms := pos_integer() | infinity, deadline := integer() | infinity},
          string(), fun(() -> term())) ->
          {ok, term()} | {error, term()} | {time_limit, expr | command}.
run(Limits, OsPid, Measure) ->
    {Which, Ms} = limit(Limits),
    Ref = make_ref(),
    Self = self(),
    {Pid, MRef} = spawn_monitor(fun() ->
                                        Self ! {Ref, try {ok, Measure()}
                                                     catch throw:{error, _} = E -> E
                                                     end}
                                end),
    receive
        {Ref, Result} -> demonitor(MRef, [flush]), Result;
        {'DOWN', MRef, process, Pid, Crash} -> exit(Crash)
    after Ms ->
        exit(Pid, kill),
        receive {'DOWN', MRef, process, Pid, _} -> ok end,
        receive {Ref, _} -> ok after 0 -> ok end,
        _ = beamscale_os:signal(OsPid, "KILL"),
        {time_limit, Which}
    end.

limit(#{expr_ms := Expr, deadline := Deadline}) ->
    Left = case Deadline of
               infinity -> infinity;
               _ -> max(0, Deadline - erlang:monotonic_time(millisecond))
           end,
    case Left of
        infinity -> {expr, Expr};
        _ when Expr =:= infinity; Left < Expr -> {command, Left};
        _ -> {expr, Expr}
    end.
