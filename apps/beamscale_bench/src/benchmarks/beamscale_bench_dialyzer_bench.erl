%% @doc dialyzer_bench: Dialyzer's two common uses, timed as two phases of one iteration: build a
%% PLT of some OTP applications (phase `build_plt') in the run's data directory, then analyse
%% applications against it (phase `analyse').
%%
%% Where the node under test has no Dialyzer (`code:which(dialyzer)' finds nothing),
%% `bench_args/2' gives no argument sets: the benchmark is skipped, nothing is run or recorded,
%% and `beamscale list' says why. Called anyway, `run/3' returns `{error, dialyzer_not_installed}'.
-module(beamscale_bench_dialyzer_bench).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, available/0]).

%% @doc `[PltApps, AnalysedApps]' per size, not scaled: Dialyzer's work is its input's.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, _Conf) ->
    case available() of
        true ->
            [beamscale_bench_util:sized(Version, {[[erts], [runtime_tools]],
                                                  [[erts, kernel, stdlib], [syntax_tools]],
                                                  [[erts, kernel, stdlib, compiler, crypto],
                                                   [tools, syntax_tools, ssh]]})];
        false -> []
    end.

%% @doc First call: build the PLT, print its module count. Second call (with the PLT file in
%% front of the arguments): analyse, print the number of warnings, remove the PLT.
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) ->
    {{continue, build_plt}, {plt, file:filename()}} | {{done, analyse}, ok}
    | {error, dialyzer_not_installed}.
run([{plt, Plt}, _PltApps, Apps | _], _Peers, _Conf) ->
    Warnings = dialyzer:run([{analysis_type, succ_typings}, {init_plt, Plt},
                             {files_rec, ebins(Apps)}]),
    ok = file:delete(Plt),
    io:format("dialyzer_bench: ~b warnings on ~w~n", [length(Warnings), Apps]),
    {{done, analyse}, ok};
run([PltApps, _Apps | _], _Peers, Conf) ->
    case available() of
        true ->
            Plt = plt_file(Conf),
            _ = dialyzer:run([{analysis_type, plt_build}, {files_rec, ebins(PltApps)},
                              {output_plt, Plt}]),
            {ok, [{files, Files}]} = dialyzer:plt_info(Plt),
            io:format("dialyzer_bench: PLT of ~w has ~b modules~n", [PltApps, length(Files)]),
            {{continue, build_plt}, {plt, Plt}};
        false ->
            {error, dialyzer_not_installed}
    end.

-spec description() -> string().
description() ->
    Skip = case available() of
               true -> "";
               false -> " [dialyzer not installed here: skipped]"
           end,
    "Dialyzer builds a PLT, then analyses OTP apps (processes, ETS, memory)" ++ Skip.

%% @doc Whether this node has Dialyzer.
-spec available() -> boolean().
available() -> code:which(dialyzer) =/= non_existing.

ebins(Apps) -> [code:lib_dir(A, ebin) || A <- Apps].

%% One file per node and iteration, so environments never share one.
plt_file(Conf) ->
    Dir = proplists:get_value(datadir, Conf, "/tmp"),
    Name = io_lib:format("~s-~b.plt", [node(), erlang:unique_integer([positive])]),
    filename:join(Dir, lists:flatten(Name)).
