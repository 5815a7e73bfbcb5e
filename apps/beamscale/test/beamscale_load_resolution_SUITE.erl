%% `beamscale load --resolution 100ms' from the command line against a real HTTP server: ten
%% rows a second in load_fine.csv, each second of load.csv the sum of its ten; a resolution
%% that does not divide a second refused (exit 2, one line).
-module(beamscale_load_resolution_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([tenths_sum_to_seconds/1, bad_resolution/1]).
-export([tenths_sum_to_seconds/0, bad_resolution/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [tenths_sum_to_seconds, bad_resolution].

%% The counts summed over a second's intervals.
-define(SUMMED, [sessions_started, sessions_done, requests, errors]).

tenths_sum_to_seconds() ->
    [{doc, "load --resolution 100ms: 10 rows a second whose counts sum to the second's."}].
tenths_sum_to_seconds(Config) ->
    {ok, Srv} = beamscale_target_http:start(#{}),
    Port = beamscale_target_http:port(Srv),
    Priv = ?config(priv_dir, Config),
    File = filename:join(Priv, "beamscale_load_resolution.scenario"),
    ok = file:write_file(File, io_lib:format(
        "{targets, [{web, #{address => \"127.0.0.1:~b\"}}]}.\n"
        "{phases, [{p, #{duration_s => 2, rate => 50}}]}.\n"
        "{sessions, [{s, #{steps => [{http, #{path => \"/a\"}}, {think, 30},"
        " {http, #{path => \"/b\"}}]}}]}.\n", [Port])),
    Out = filename:join(Priv, "beamscale_load_resolution_runs"),
    try
        {Status, Text} = beamscale_test_cli:run(["load", File, "--out", Out, "--name", "r",
                                                 "--resolution", "100ms", "--quiet"]),
        ct:log("~ts", [Text]),
        ?assertEqual(0, Status),
        Dir = filename:join(Out, "r"),
        Seconds = beamscale_store:read_rows(filename:join(Dir, "load.csv")),
        Fine = beamscale_store:read_rows(filename:join(Dir, "load_fine.csv")),
        ?assert(length(Seconds) >= 2),
        ?assertEqual(10 * length(Seconds), length(Fine)),
        %% Each interval's end, a tenth of a second apart from 0.1.
        ?assertEqual([I / 10 || I <- lists:seq(1, length(Fine))],
                     [binary_to_float(T) || #{t_s := T} <- Fine]),
        [sums(Second, Fine) || Second <- Seconds],
        %% Taken every 100 ms, not once a second: most intervals of the phase have requests.
        Busy = [R || #{t_s := T, requests := R} <- Fine, binary_to_float(T) =< 2.0,
                     binary_to_integer(R) > 0],
        ?assert(length(Busy) >= 10),
        #{<<"resolution_ms">> := 100} = beamscale_test_load:json(Dir, "run.json"),
        %% The page draws the intervals too.
        {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
        ?assertNotEqual(nomatch, binary:match(Html, <<"requests every 100 ms">>)),
        Total = lists:sum([binary_to_integer(R) || #{requests := R} <- Fine]),
        #{<<"requests">> := Total} = beamscale_test_load:json(Dir, "summary.json")
    after
        beamscale_target_http:stop(Srv)
    end.

sums(#{t_s := T} = Second, Fine) ->
    N = binary_to_integer(T),
    Mine = [R || #{t_s := F} = R <- Fine, binary_to_float(F) > N - 1 + 0.05,
                 binary_to_float(F) < N + 0.05],
    ?assertEqual(10, length(Mine)),
    [?assertEqual({T, K, binary_to_integer(maps:get(K, Second))},
                  {T, K, lists:sum([binary_to_integer(maps:get(K, R)) || R <- Mine])})
     || K <- ?SUMMED].

bad_resolution() -> [{doc, "--resolution 300ms: exit 2, the values allowed named."}].
bad_resolution(Config) ->
    File = filename:join(?config(priv_dir, Config), "beamscale_load_resolution_bad.scenario"),
    {Status, Text} = beamscale_test_cli:run(["load", File, "--resolution", "300ms"]),
    ?assertEqual(2, Status),
    ?assertMatch({match, _}, re:run(Text, "--resolution: 300ms is not one of 100ms")),
    ?assertEqual(1, length(string:lexemes(Text, "\n"))).
