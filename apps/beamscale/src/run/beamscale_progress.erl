%% @doc Progress of a long run: one live line on a terminal (job k of N, benchmark, environment,
%% elapsed and estimated time left), plain lines otherwise, nothing with `quiet'.
%%
%% A small `gen_server' owns the line, so the executor can report events through a plain fun;
%% the state and the text of the line are pure (`new/2', `at_job/3', `line/1').
-module(beamscale_progress).
-behaviour(gen_server).

-export([start/2, job/3, event/2, finish/1]).
-export([new/2, at_job/3, line/1, line/2, mode/0]).
-export([init/1, handle_call/3, handle_cast/2]).
-export_type([progress/0, mode/0]).

-type mode() :: live | plain | quiet.
-opaque progress() :: #{mode := mode(), total := non_neg_integer(), k := non_neg_integer(),
                        started := integer(), label := iodata(), detail := iodata()}.

%% Clearing the line is one write; a printer that takes longer is stuck on its output, and the
%% run ends without it rather than hang.
-define(FINISH_TIMEOUT, 5000).

%% @doc The mode for this process's standard output: live on a terminal, plain otherwise.
-spec mode() -> live | plain.
mode() ->
    %% With -noshell (escripts) io:columns/0 never sees the terminal, so ask Linux what our
    %% standard output is.
    case file:read_link("/proc/" ++ os:getpid() ++ "/fd/1") of
        {ok, "/dev/pts/" ++ _} -> live;
        {ok, "/dev/tty" ++ _} -> live;
        _ -> plain
    end.

%% @doc Start showing the progress of `Total' jobs; the process is linked to the caller, so
%% it ends with the run.
-spec start(non_neg_integer(), mode()) -> {ok, pid()} | {error, term()}.
start(Total, Mode) ->
    %% No timeout: init only builds the state, and cannot fail or hang.
    gen_server:start_link(?MODULE, {Total, Mode}, []).

%% @doc Job `K' starts; `Label' names its benchmark and environment.
-spec job(pid(), pos_integer(), iodata()) -> ok.
job(Pid, K, Label) -> gen_server:cast(Pid, {job, K, Label}).

%% @doc Something happened inside the current job.
-spec event(pid(), beamscale_executor:event()) -> ok.
event(Pid, Event) -> gen_server:cast(Pid, {event, Event}).

%% @doc End the live line and stop; returns once everything is printed (or the printer is gone).
-spec finish(pid()) -> ok.
finish(Pid) ->
    try gen_server:call(Pid, finish, ?FINISH_TIMEOUT)
    catch
        exit:_ -> ok
    end.

%% @doc A fresh state for `Total' jobs.
-spec new(non_neg_integer(), mode()) -> progress().
new(Total, Mode) ->
    #{mode => Mode, total => Total, k => 0, started => erlang:monotonic_time(millisecond),
      label => "", detail => ""}.

%% @doc The state once job `K' has started.
-spec at_job(progress(), pos_integer(), iodata()) -> progress().
at_job(P, K, Label) -> P#{k := K, label := Label, detail := ""}.

%% @doc The text of the progress line.
-spec line(progress()) -> iodata().
line(#{started := T0} = P) -> line(P, (erlang:monotonic_time(millisecond) - T0) div 1000).

%% @doc The text of the progress line `Elapsed' seconds after the start (pure).
-spec line(progress(), non_neg_integer()) -> iodata().
line(#{total := Total, k := K, label := Label, detail := Detail}, Elapsed) ->
    Left = case K > 1 of
               true ->
                   Estimate = Elapsed * (Total - K + 1) div (K - 1),
                   io_lib:format("~~~s left", [duration(Estimate)]);
               false -> "estimating"
           end,
    io_lib:format("[~b/~b] ~s ~s  ~s elapsed, ~s",
                  [K, Total, Label, Detail, duration(Elapsed), Left]).

%%% Internals

%% @private
-spec init({non_neg_integer(), mode()}) -> {ok, progress()}.
init({Total, Mode}) -> {ok, new(Total, Mode)}.

%% @private
-spec handle_call(finish, gen_server:from(), progress()) -> {stop, normal, ok, progress()}.
handle_call(finish, _From, P) ->
    clear_line(P),
    {stop, normal, ok, P}.

%% @private
-spec handle_cast({job, pos_integer(), iodata()} | {event, beamscale_executor:event()},
                  progress()) -> {noreply, progress()}.
handle_cast({job, K, Label}, P) ->
    P1 = at_job(P, K, Label),
    show(P1),
    {noreply, P1};
handle_cast({event, Event}, P) ->
    {noreply, handle(P, Event)}.

handle(P, {iteration, warmup, _}) -> detail(P, "warm-up");
handle(P, {iteration, N, I}) -> detail(P, io_lib:format("iteration ~b/~b", [N, I]));
handle(#{mode := Mode} = P, {failed, Reason}) ->
    Mode =/= quiet andalso
        io:put_chars(io_lib:format("~s  failed: ~ts~n",
                                   [clear(Mode), beamscale_error:format(Reason)],
                                   [{chars_limit, 300}])),
    show(P),
    P;
handle(P, _Other) ->
    P.

clear_line(#{mode := live}) -> io:format("~s", [clear(live)]);
clear_line(_) -> ok.

detail(#{mode := live} = P, Detail) ->
    P1 = P#{detail := Detail},
    show(P1),
    P1;
detail(P, _Detail) ->
    P.

show(#{mode := quiet}) -> ok;
show(#{mode := live} = P) -> io:format("~s~ts", [clear(live), line(P)]);
show(#{mode := plain, detail := ""} = P) -> io:format("~ts~n", [line(P)]);
show(#{mode := plain}) -> ok.

clear(live) -> "\r\e[K";
clear(_) -> "".

duration(S) when S < 60 -> io_lib:format("~bs", [S]);
duration(S) when S < 3600 -> io_lib:format("~bm~2..0bs", [S div 60, S rem 60]);
duration(S) -> io_lib:format("~bh~2..0bm", [S div 3600, (S rem 3600) div 60]).
