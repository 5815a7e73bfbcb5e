%% @doc Built-in run configurations (`beamscale run --preset NAME'). A preset is a list of
%% configuration entries; `beamscale_config' reads its text as it reads a file, so options still
%% override it and a wrong entry is reported with the preset's name and line.
-module(beamscale_presets).

-export([names/0, terms/1, text/1]).

%% @doc The names of the presets.
-spec names() -> [string()].
names() -> ["quick"].

%% @doc The entries of preset `Name'.
-spec terms(string()) -> {ok, [{atom(), term()}]} | error.
terms("quick") ->
    %% Every synthetic benchmark of bencherl's section 5.1 (each says so with its `quick' tag),
    %% small, on one scheduler and on all.
    {ok, [{benchmarks, beamscale_bench:tagged(quick)},
          {version, short},
          {schedulers, [1, all]},
          {nodes, [1]},
          {iterations, 3},
          {warmups, 1},
          %% A smoke run: one emulator per point keeps it under a minute.
          {launches, 1},
          {timeout, 60}]};
terms(_) -> error.

%% @doc Preset `Name' as the text of a configuration file, one entry a line.
-spec text(string()) -> {ok, string()} | error.
text(Name) ->
    case terms(Name) of
        {ok, Entries} -> {ok, lists:flatten([io_lib:format("~0tp.~n", [E]) || E <- Entries])};
        error -> error
    end.
