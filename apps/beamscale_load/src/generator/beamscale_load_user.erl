%% @doc One simulated user: runs one session's steps and records into the run's metrics.
%%
%% Latency is measured twice: from the request's actual send, and from its intended start. The
%% user keeps an intended clock that starts at its scheduled arrival. A think time is pacing: the
%% next request is intended a think time after the previous one's intended start, so a late reply
%% makes the following requests late rather than rarer (coordinated omission corrected). A request
%% that follows another without a think time is back-to-back: it is intended as soon as the
%% previous one answers, keeping the lateness the user had.
-module(beamscale_load_user).

-export([run/4, resume/4]).

%% Waits from this long (ms) shrink the user to its state: a garbage collection, or at a think
%% time hibernation (heap cut to the live data, call stack dropped).
-define(COMPACT_MS, 1000).

-type ctx() :: #{metrics := beamscale_load_metrics:metrics(), targets := #{atom() => map()},
                 controller => pid(), rendezvous => pid(), dump => beamscale_load_dump:dump(),
                 vars => beamscale_load_vars_source:ctx(),
                 sources => beamscale_load_source:sources()}.
-export_type([ctx/0]).

%% @doc Run `Session' for a user that was due at monotonic time `Due' (native units).
%%
%% The steps run from an explicit stack of what is left (frames), not from nested calls, so that
%% a long think time can hibernate (which drops the call stack) and resume where it was.
-spec run(beamscale_load_scenario:session(), ctx(), integer(), rand:state()) -> ok.
run(#{steps := Steps} = Session, #{metrics := M} = Ctx, Due, Rand) ->
    beamscale_load_metrics:incr(M, sessions_started),
    ok = beamscale_load_source:choose(maps:get(sources, Ctx, beamscale_load_source:new([]))),
    St0 = #{ctx => Ctx, conns => #{}, base => Due, intended => Due, rand => Rand,
            vars => #{}, jar => #{}, user => user_number(Ctx), due => Due, steps => Steps,
            bidi => maps:get(bidi, Session, false)},
    session([{steps, Steps}], St0, 0).

%% @doc Go on after a hibernating think: its timer wakes the user (a socket's message may wake
%% it before: it then waits for the timer, that message left for the next request), then the
%% frames left run.
-spec resume({reference(), integer()}, [frame()], map(), non_neg_integer()) -> ok.
resume({TRef, Next}, Frames, #{rand := R} = St, Restarts) ->
    receive {timeout, TRef, think} -> ok end,
    %% The timer counts whole milliseconds: the rest of the intended time, if any.
    _ = wait_until(Next),
    session(Frames, St#{rand := rand:seed_s(R)}, Restarts).

user_number(#{vars := #{users := U}}) -> atomics:add_get(U, 1, 1);
user_number(_) -> 0.

%% A check's `abort', `restart' or `abort_test' ends the steps by a throw carrying the user's
%% state; `Restarts': how many times the session restarted (a check's `max_restart' bounds it,
%% Tsung's default 3).
session(Frames, #{steps := Steps} = St, Restarts) ->
    %% The restart runs outside the `try', so that a restarted session does not nest them.
    St2 = try exec(Frames, St, Restarts)
          catch
              throw:{session, {restart, Max}, St1} when Restarts < Max -> {restart, St1};
              throw:{session, abort_test, St1} -> abort_test(St1);
              throw:{session, _, St1} -> St1
          end,
    case St2 of
        {restart, St3} -> session([{steps, Steps}], St3, Restarts + 1);
        _ -> finish(St2)
    end.

%% Tsung's `abort_test': the run is told to stop, as by an interrupt.
abort_test(#{ctx := #{controller := C}} = St) -> C ! interrupt, St;
abort_test(St) -> St.

finish(#{ctx := #{metrics := M}, conns := Conns, due := Due} = St) ->
    _ = page_done(St),
    beamscale_load_metrics:record(M, session, erlang:monotonic_time() - Due),
    beamscale_load_metrics:incr(M, sessions_done),
    maps:foreach(fun({Mod, _}, C) -> beamscale_load_request:close(Mod, C) end, Conns).

%% What is left to run: steps, and what to do when a block's steps are done.
-type frame() :: {steps, [beamscale_load_scenario:step()]} | {loop, non_neg_integer(), list()}
               | {repeat, pos_integer(), list(), term()}
               | {for, term(), integer(), integer(), integer(), list()}
               | {foreach, binary(), [binary()], list()}
               | {tx, term(), integer()}.

exec([], St, _Restarts) -> St;
exec([{steps, []} | Fs], St, Restarts) -> exec(Fs, St, Restarts);
exec([{steps, [{think, Dist} | Rest]} | Fs], St, Restarts) ->
    think(Dist, [{steps, Rest} | Fs], St, Restarts);
exec([{steps, [Step | Rest]} | Fs], St, Restarts) ->
    {Push, St1} = step(Step, St),
    exec(Push ++ [{steps, Rest} | Fs], St1, Restarts);
%% A counter, not a list of N elements: a loop may run "forever" until the time limit.
exec([{loop, 0, _} | Fs], St, Restarts) -> exec(Fs, St, Restarts);
exec([{loop, N, Steps} | Fs], St, Restarts) ->
    exec([{steps, Steps}, {loop, N - 1, Steps} | Fs], St, Restarts);
exec([{repeat, Max, Steps, {Kind, Cond}} | Fs], #{vars := Vars} = St, Restarts) ->
    %% The body ran; the condition decides whether it runs again, at most `Max' times.
    case Max > 1 andalso beamscale_load_vars:test(Cond, Vars) =:= (Kind =:= while) of
        true -> exec([{steps, Steps}, {repeat, Max - 1, Steps, {Kind, Cond}} | Fs], St, Restarts);
        false -> exec(Fs, St, Restarts)
    end;
exec([{for, Var, I, To, Incr, Steps} | Fs], St, Restarts) ->
    %% As Tsung: the body runs with the variable at `From', then while it is at most `To'.
    case I + Incr =< To of
        true -> exec([{steps, Steps}, {for, Var, I + Incr, To, Incr, Steps} | Fs],
                     set_var(Var, I + Incr, St), Restarts);
        false -> exec(Fs, St, Restarts)
    end;
exec([{foreach, _Var, [], _Steps} | Fs], St, Restarts) -> exec(Fs, St, Restarts);
exec([{foreach, Var, [V | Vs], Steps} | Fs], #{vars := Vars} = St, Restarts) ->
    exec([{steps, Steps}, {foreach, Var, Vs, Steps} | Fs], St#{vars := Vars#{Var => V}},
         Restarts);
exec([{tx, Name, Start} | Fs], #{ctx := #{metrics := M}} = St, Restarts) ->
    beamscale_load_metrics:record(M, {tx, Name}, erlang:monotonic_time() - Start),
    exec(Fs, St, Restarts).

%% A think time: a long one hibernates until a timer at its end (see `resume/4'), unless a
%% message (from a socket) is already there, which would wake it at once: then it waits as a
%% short one does. The random
%% state sleeps in its exported form (its algorithm's functions would take 35 words more).
think({var, Name, Scale, How}, Fs, #{vars := Vars} = St, Restarts) ->
    %% A value that is not a number (or none) thinks 0 ms; at most the longest wait. Read as
    %% the conditions read numbers (`beamscale_load_vars:number/1').
    Ms = case beamscale_load_vars:number(maps:get(Name, Vars, <<>>)) of
             {ok, N} -> N * Scale;
             error -> 0
         end,
    Dist = case How of
               exponential when Ms > 0 -> {exponential, min(Ms, 1.0e8)};
               _ -> {constant, max(0, min(Ms, 4294967295))}
           end,
    think(Dist, Fs, St, Restarts);
think(Dist, Fs, #{base := Base, rand := R0} = St0, Restarts) ->
    St = page_done(St0),
    {Ms, R1} = beamscale_load_arrival:think(Dist, R0),
    Next = Base + erlang:convert_time_unit(round(Ms * 1000), microsecond, native),
    St1 = St#{base := Next, intended := Next, rand := R1},
    Left = erlang:convert_time_unit(Next - erlang:monotonic_time(), native, millisecond),
    case St of
        %% A bidi session's think takes what the servers push meanwhile.
        #{bidi := true} -> exec(Fs, element(2, beamscale_load_push:wait(Next, none, St1)),
                                Restarts);
        _ -> think_wait(Left, Next, Fs, St1, Restarts)
    end.

think_wait(Left, Next, Fs, #{rand := R1} = St1, Restarts) ->
    case Left >= ?COMPACT_MS andalso process_info(self(), message_queue_len) of
        {message_queue_len, 0} ->
            %% Hibernation waits for a message, with no timeout of its own.
            TRef = erlang:start_timer(erlang:convert_time_unit(Next, native, millisecond),
                                      self(), think, [{abs, true}]),
            erlang:hibernate(?MODULE, resume, [{TRef, Next}, Fs,
                                               St1#{rand := rand:export_seed_s(R1)}, Restarts]);
        _ -> wait_until(Next), exec(Fs, St1, Restarts)
    end.

%% Tsung's page: the requests since the last think time (or the session's start), from the
%% first one's send to the last one's reply, recorded at the next think or the session's end.
page_done(#{page := {First, Last}, ctx := #{metrics := M}} = St) ->
    beamscale_load_metrics:record(M, page, Last - First),
    maps:remove(page, St);
page_done(St) -> St.

page(Send, End, St) ->
    {First, _} = maps:get(page, St, {Send, End}),
    St#{page => {First, End}}.

set_var(Var, I, #{vars := Vars} = St) -> St#{vars := Vars#{Var => integer_to_binary(I)}}.

%% A step other than a think: its new state, and the frames it pushes (a block's steps).
%% A request under its name: what the metrics record meanwhile is counted under it too.
step({named, Name, Request}, St) -> step({tagged, [], {named, Name, Request}}, St);
%% Its tags too (`beamscale_load_tags'); each request has a name once prepared.
step({tagged, Tags, {named, Name, Request}}, #{ctx := #{metrics := M}} = St) ->
    beamscale_load_metrics:start_request(M, Name, Tags),
    try step(Request, St)
    after beamscale_load_metrics:stop_request()
    end;
step({tagged, _, Step}, St) -> step(Step, St);
%% Code of the user's own (an amoc user's start/2, beamscale_amoc_user), given the run's
%% metrics: no request itself, what it measures it records; `{error, R}' is the session's error.
step({code, M, F, A}, #{ctx := #{metrics := Metrics}} = St) ->
    case apply(M, F, [Metrics | A]) of
        ok -> ok;
        {error, Reason} -> beamscale_load_metrics:error(Metrics, Reason)
    end,
    {[], St};
step({request, Mod, Target, Spec, Timeout}, St) ->
    {[], element(1, request(Mod, Target, Spec, Timeout, St, []))};
step({dyn, Dyn, Request}, St) -> {[], dyn(Dyn, Request, St, 0)};
%% An eval fun (the file author's code) may fail: its reason is the run's, the variables unset.
step({setvars, {eval, Code}, Names}, #{vars := Vars, user := U, ctx := #{metrics := M}} = St) ->
    case beamscale_load_eval:run(Code, length(Names), Vars, U) of
        {ok, Values} ->
            {[], St#{vars := maps:merge(Vars, maps:from_list(lists:zip(Names, Values)))}};
        {error, R} -> beamscale_load_metrics:error(M, {eval, R}), {[], St}
    end;
step({setvars, Source, Names}, #{vars := Vars, rand := R0, user := U, ctx := Ctx} = St) ->
    {Values, R1} = beamscale_load_vars_source:source(Source, length(Names),
                                              {Vars, U, maps:get(vars, Ctx, #{})}, R0),
    {[], St#{vars := maps:merge(Vars, maps:from_list(lists:zip(Names, Values))), rand := R1}};
step({'if', Cond, Steps}, #{vars := Vars} = St) ->
    {[{steps, Steps} || beamscale_load_vars:test(Cond, Vars)], St};
step({repeat, Max, Steps, Cond}, St) -> {[{steps, Steps}, {repeat, Max, Steps, Cond}], St};
step({for, Var, From, To, Incr, Steps}, St) ->
    {[{steps, Steps}, {for, Var, From, To, Incr, Steps}], set_var(Var, From, St)};
step({loop, N, Steps}, St) -> {[{loop, N, Steps}], St};
step({foreach, Var, In, Filter, Steps}, #{vars := Vars} = St) ->
    {[{foreach, Var, beamscale_load_vars:list(In, Filter, Vars), Steps}], St};
step({wait, Mod, Target, Ms}, #{ctx := #{metrics := M}} = St) ->
    Until = erlang:monotonic_time() + erlang:convert_time_unit(Ms, millisecond, native),
    {Got, St1} = beamscale_load_push:wait(Until, {Mod, Target}, St),
    [beamscale_load_metrics:error(M, {no_push, Ms}) || Got =:= timeout],
    Now = erlang:monotonic_time(),
    {[], St1#{base := Now, intended := Now}};
%% As a `wait': the time spent waiting for the other users is no request's latency.
step({rendezvous, Name, N, Ms}, #{ctx := #{metrics := M, rendezvous := R}} = St) ->
    [beamscale_load_metrics:error(M, {rendezvous, Name, N, Ms})
     || beamscale_load_rendezvous:arrive(R, Name, N, Ms) =:= timeout],
    Now = erlang:monotonic_time(),
    {[], St#{base := Now, intended := Now}};
%% Tsung's `<set_option>': the settings of the targets from now on; a client certificate needs
%% new connections (Tsung closes its connection too), not resuming a TLS session without it.
step({set_option, Opts}, #{conns := Conns} = St) ->
    Conns1 = case Opts of
                 #{tls := _} -> beamscale_load_tls:forget(), close(fun(_) -> true end, Conns);
                 _ -> Conns
             end,
    {[], St#{conns := Conns1, topts => maps:merge(maps:get(topts, St, #{}), Opts)}};
step({disconnect, Mod}, #{conns := Conns} = St) ->
    {[], St#{conns := close(fun({M, _}) -> M =:= Mod end, Conns)}};
step({interaction, Action, Name}, #{ctx := #{metrics := M, rendezvous := R}} = St) ->
    case beamscale_load_rendezvous:interaction(R, Action, Name) of
        {ok, Native} -> beamscale_load_metrics:record(M, {tx, Name}, Native);
        none -> ok
    end,
    {[], St};
step({abort, session}, St) -> throw({session, abort, St});
step({abort, all}, St) -> throw({session, abort_test, St});
step({transaction, Name, Steps}, St) ->
    Start = min(maps:get(intended, St), erlang:monotonic_time()),
    {[{steps, Steps}, {tx, Name, Start}], St}.

%% The connections `Which' picks, closed and dropped.
close(Which, Conns) ->
    {Gone, Kept} = lists:partition(fun({Key, _}) -> Which(Key) end, maps:to_list(Conns)),
    _ = [beamscale_load_request:close(Mod, C) || {{Mod, _}, C} <- Gone],
    maps:from_list(Kept).

%% A target with the settings of the session's `set_option's: its client certificate added to
%% the TLS options of a TLS target.
target(T, #{topts := #{tls := Cert} = Opts}) ->
    Tls = case T of
              #{tls := Old} -> #{tls => Cert ++ [O || O <- Old, not lists:keymember(
                                                                  element(1, O), 1, Cert)]};
              _ -> #{}
          end,
    maps:merge(T, maps:merge(maps:remove(tls, Opts), Tls));
target(T, #{topts := Opts}) -> maps:merge(T, Opts);
target(T, _St) -> T.

request(Mod, Target, Spec, Timeout, #{ctx := Ctx, conns := Conns} = St, Unset) ->
    #{metrics := M, targets := Targets} = Ctx,
    Send = wait_until(maps:get(intended, St)),
    Key = {Mod, Target},
    Intended = min(maps:get(intended, St), Send),
    Dump = maps:get(dump, Ctx, none),
    _ = beamscale_load_dump:arm(Dump),
    Result = beamscale_load_request:run(Mod, target(maps:get(Target, Targets), St),
                                        maps:get(Key, Conns, closed), {Spec, Timeout}, M),
    ok = beamscale_load_dump:done(Dump, {maps:get(user, St), Mod, Send}, Result),
    End = erlang:monotonic_time(),
    beamscale_load_metrics:incr(M, requests),
    {Conn, Resp} = case Spec of
                       #{ack := no_ack} -> no_ack(M, Result, End - Intended, End - Send);
                       _ -> outcome(M, Result, End - Intended, End - Send)
                   end,
    unset_error(M, Result, Unset),
    {(page(Send, End, St))#{conns := Conns#{Key => Conn}, base := Intended,
                            intended := Intended + End - Send},
     Resp}.

%% A request with variables, cookies or checks; `Loops': times it was sent again by a check.
dyn(Dyn, {request, Mod, Target, Spec, Timeout} = Req, St, Loops) ->
    #{ctx := #{metrics := M, targets := Targets}, vars := Vars, jar := Jar} = St,
    case beamscale_load_dynreq:prepare(Dyn, Mod, Spec, maps:get(Target, Targets), {Vars, Jar}) of
        {ok, Spec1, Jar1, Unset} ->
            unset(M, Unset),
            case request(Mod, Target, Spec1, Timeout, St#{jar := Jar1}, Unset) of
                {St1, none} -> St1;
                {St1, Resp} -> react(Dyn, Req, Resp, St1, Loops)
            end;
        {error, Reason, Jar1, Unset} ->
            unset(M, Unset),
            beamscale_load_metrics:error(M, Reason),
            St#{jar := Jar1}
    end.

%% An unset variable is counted under its name (`unset.NAME'), each time a request lacks it.
unset(_M, []) -> ok;
unset(M, Names) ->
    [beamscale_load_metrics:count(M, <<"unset.", N/binary>>) || N <- Names],
    ok.

%% One failed request is one error whatever its causes: a request sent with unset variables
%% that otherwise succeeded is one error, named by its first unset variable; one that failed
%% counts its own failure only (Tsung sends `undefined' and counts no error: docs/scenario.md).
unset_error(_M, _Result, []) -> ok;
unset_error(M, Result, [N | _]) when element(1, Result) =:= ok ->
    beamscale_load_metrics:error(M, {unset_variable, N});
unset_error(_M, _Result, _) -> ok.

react(Dyn, Req, Resp, #{ctx := #{metrics := M}, vars := V, jar := J} = St, Loops) ->
    {Vars, Jar, Keys, Action} = beamscale_load_dynreq:after_response(Dyn, Resp, {V, J}),
    [beamscale_load_metrics:count(M, K) || K <- Keys],
    St1 = St#{vars := Vars, jar := Jar},
    case Action of
        continue -> St1;
        {loop, Max, _} when Loops >= Max -> St1;
        {loop, _, SleepMs} ->
            Next = wait_until(erlang:monotonic_time() +
                                  erlang:convert_time_unit(SleepMs, millisecond, native)),
            dyn(Dyn, Req, St1#{base := Next, intended := Next}, Loops + 1);
        Stop -> throw({session, Stop, St1})
    end.

%% One rule for every kind (docs/scenario.md, "How latency is measured"): whatever the server
%% answered is a latency, an error status, an unexpected result or a database's error reply
%% (`{pgsql, SQLSTATE, Message}', `{mysql_error, ...}') alike, and so is a timeout; a failure to
%% connect or send, or an exception, is not. Every error is counted under its reason.
%% A send that waits for no reply has no response time (Tsung's request_noack): counted, not
%% in the latency percentiles; a failed send is an error as any other.
no_ack(M, {ok, Conn}, _Corrected, _Sent) ->
    beamscale_load_metrics:count(M, <<"request_noack">>),
    {Conn, none};
no_ack(M, Result, Corrected, Sent) -> outcome(M, Result, Corrected, Sent).

outcome(M, {ok, Conn}, Corrected, Sent) ->
    latency(M, Corrected, Sent),
    {Conn, none};
outcome(M, {ok, Conn, Resp}, Corrected, Sent) ->
    latency(M, Corrected, Sent),
    {Conn, Resp};
outcome(M, {error, Reason, Conn, Resp}, Corrected, Sent) ->
    {outcome_error(M, Reason, Conn, Corrected, Sent), Resp};
outcome(M, {error, Reason, Conn}, Corrected, Sent) ->
    {outcome_error(M, Reason, Conn, Corrected, Sent), none}.

outcome_error(M, Reason, Conn, Corrected, Sent) ->
    beamscale_load_metrics:error(M, Reason),
    case Reason of
        timeout -> latency(M, Corrected, Sent);
        {status, _} -> latency(M, Corrected, Sent);
        {rpc_error, _} -> latency(M, Corrected, Sent);
        {unexpected, _} -> latency(M, Corrected, Sent);
        {mysql_error, _, _, _} -> latency(M, Corrected, Sent);
        {pgsql, _, _} -> latency(M, Corrected, Sent);
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
        Ms when is_integer(Ms), Ms >= ?COMPACT_MS ->
            %% A long think: the heap shrinks to what the user keeps, so that many thinking
            %% users cost little memory (one collection per long wait is cheap).
            true = erlang:garbage_collect(),
            receive after Ms -> erlang:monotonic_time() end;
        Ms when is_integer(Ms), Ms > 0 -> receive after Ms -> erlang:monotonic_time() end;
        _ -> Now
    end.
