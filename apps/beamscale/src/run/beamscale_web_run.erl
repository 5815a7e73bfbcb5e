%% @doc What the live page (`beamscale_web') shows of a suite run (`beamscale run --web'): a
%% watcher reads the run directory once a second and, when its measurements, failures or plan
%% changed, renders the run page so far (`beamscale_writer:load/1', the same data as the final
%% `index.html') with the progress (`beamscale_writer:missing/1') through
%% `beamscale_report_live'. It reads the files the run writes rather than hooking the
%% coordinator: the run's code is untouched and the page shows what the directory holds.
-module(beamscale_web_run).

-export([start/2, stop/1]).

%% How often the directory is looked at: the page polls once a second too.
-define(TICK_MS, 1000).
%% The last render may read a large run; past this the watcher is killed (display only).
-define(STOP_TIMEOUT_MS, 30000).
-define(WATCHED, [measurements, failures, plan, run_json]).

%% @doc Watch `Dir' for `Web' until `stop/1'.
-spec start(beamscale_web:web(), file:filename()) -> pid().
start(Web, Dir) -> spawn_link(fun() -> loop(Web, Dir, none) end).

%% @doc Render once more, as done, and stop.
-spec stop(pid()) -> ok.
stop(Pid) ->
    Ref = monitor(process, Pid),
    Pid ! stop,
    receive {'DOWN', Ref, process, Pid, _} -> ok
    after ?STOP_TIMEOUT_MS -> unlink(Pid), exit(Pid, kill), ok
    end.

loop(Web, Dir, Seen) ->
    Now = stamp(Dir),
    _ = Now =:= Seen orelse publish(Web, Dir, running),
    receive stop -> publish(Web, Dir, done)
    after ?TICK_MS -> loop(Web, Dir, Now)
    end.

stamp(Dir) ->
    [{filelib:file_size(F), filelib:last_modified(F)}
     || N <- ?WATCHED, F <- [beamscale_format_rundir:path(Dir, N)]].

publish(Web, Dir, State) ->
    {Done, Expected, _} = beamscale_writer:missing(Dir),
    Report = case beamscale_writer:load(Dir) of
                 {ok, Data} -> Data;
                 {error, _} -> none
             end,
    Live = #{done => Done, expected => Expected, state => State, report => Report},
    beamscale_web:publish(Web, #{page => beamscale_report_live:run_page(Live),
                                 json => beamscale_report_live:run_json(Live)}).
