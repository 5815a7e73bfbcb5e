%% Test helper for load runs: a scenario written to the suite's priv_dir and read, the JSON files
%% of a load run directory, and the node names epmd knows on 127.0.0.1.
-module(beamscale_test_load).
-export([scenario/3, json/2, epmd_names/0]).

-include_lib("common_test/include/ct.hrl").

%% Write `Text' as `File' in priv_dir and read it as a scenario (it must be valid).
scenario(Config, File, Text) ->
    Path = filename:join(?config(priv_dir, Config), File),
    ok = file:write_file(Path, Text),
    {ok, S} = beamscale_load_scenario:load(Path),
    S.

%% A JSON file of a run directory, decoded.
json(Dir, File) ->
    {ok, Bin} = file:read_file(filename:join(Dir, File)),
    {ok, Term} = beamscale_format_json:decode(Bin),
    Term.

%% The names registered with epmd on 127.0.0.1 (nodes still up).
epmd_names() ->
    {ok, Names} = net_adm:names({127, 0, 0, 1}),
    [N || {N, _} <- Names].
