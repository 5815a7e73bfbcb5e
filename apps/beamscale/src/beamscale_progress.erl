%% @doc Progress of a long run: one live line on a terminal (job k of N, benchmark, environment,
%% elapsed and estimated time left), plain lines otherwise, nothing with `quiet'.
-module(beamscale_progress).

-export([new/2, job/3, event/2, finish/1, line/1, mode/0]).
-export_type([progress/0, mode/0]).

-type mode() :: live | plain | quiet.
-opaque progress() :: #{mode := mode(), total := non_neg_integer(), k := non_neg_integer(),
                        started := integer(), label := iodata(), detail := iodata()}.

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

%% @doc Start tracking `Total' jobs.
-spec new(non_neg_integer(), mode()) -> progress().
new(Total, Mode) ->
    #{mode => Mode, total => Total, k => 0, started => erlang:monotonic_time(millisecond),
      label => "", detail => ""}.

%% @doc Job `K' starts; `Label' names its benchmark and environment.
-spec job(progress(), pos_integer(), iodata()) -> progress().
job(P, K, Label) ->
    P1 = P#{k := K, label := Label, detail := ""},
    show(P1),
    P1.

%% @doc Something happened inside the current job.
-spec event(progress(), beamscale_executor:event()) -> progress().
event(P, {iteration, warmup, _}) -> detail(P, "warm-up");
event(P, {iteration, N, I}) -> detail(P, io_lib:format("iteration ~b/~b", [N, I]));
event(#{mode := Mode} = P, {failed, Reason}) ->
    Mode =/= quiet andalso
        io:put_chars(io_lib:format("~s  failed: ~0tp~n", [clear(Mode), Reason],
                                   [{chars_limit, 300}])),
    show(P),
    P.

%% @doc End the live line.
-spec finish(progress()) -> ok.
finish(#{mode := live}) -> io:format("~s", [clear(live)]);
finish(_) -> ok.

%% @doc The text of the progress line.
-spec line(progress()) -> iodata().
line(#{total := Total, k := K, started := T0, label := Label, detail := Detail}) ->
    Elapsed = (erlang:monotonic_time(millisecond) - T0) div 1000,
    Left = case K > 1 of
               true -> io_lib:format("~~~s left", [duration(Elapsed * (Total - K + 1) div (K - 1))]);
               false -> "estimating"
           end,
    io_lib:format("[~b/~b] ~s ~s  ~s elapsed, ~s", [K, Total, Label, Detail, duration(Elapsed), Left]).

%%% Internals

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
