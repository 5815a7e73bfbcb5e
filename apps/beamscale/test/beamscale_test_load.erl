%% Test helper for load runs: a scenario written to the suite's priv_dir and read, the JSON files
%% of a load run directory, the node names epmd knows on 127.0.0.1, and a wait for a condition.
-module(beamscale_test_load).
-export([scenario/3, json/2, epmd_names/0, wait_for/2]).

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

%% Until `F()' is true, asked every 200 ms; an error after `Ms' (a bounded test).
wait_for(F, Ms) when Ms =< 0 -> error({timeout, F()});
wait_for(F, Ms) ->
    case F() of
        true -> ok;
        false -> timer:sleep(200), wait_for(F, Ms - 200)
    end.
