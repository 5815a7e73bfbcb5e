%% `beamscale load' under faults (issue 31), through the command line as a user runs it against
%% a real HTTP server on 127.0.0.1: a second load of the same --name at once.
-module(beamscale_cmd_load_faults_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_testcase/2, end_per_testcase/2]).
-export([same_name_at_once/1]).
-export([same_name_at_once/0]).

%% A load of a few seconds, its emulator's start included, on a loaded host.
-define(RUN_TIMEOUT, 60000).
%% load.csv gets a row a second: 30 s covers a slow start.
-define(ROWS_TRIES, 300).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [same_name_at_once].

init_per_testcase(_Case, Config) ->
    {ok, Srv} = beamscale_target_http:start(#{}),
    [{server, Srv} | Config].

end_per_testcase(_Case, Config) ->
    beamscale_target_http:stop(?config(server, Config)).

%% A scenario of `Secs' seconds at 20 users/s against the suite's server.
scenario(Config, Secs) ->
    Port = beamscale_target_http:port(?config(server, Config)),
    File = filename:join(?config(priv_dir, Config), "faults.scenario"),
    ok = file:write_file(File, io_lib:format(
        "{targets, [{web, #{address => \"127.0.0.1:~b\"}}]}.\n"
        "{phases, [{p, #{duration_s => ~b, rate => 20}}]}.\n"
        "{sessions, [{s, #{steps => [{http, #{target => web}}, {think, 200}, "
        "{http, #{target => web}}]}}]}.\n{drain_s, 5}.\n", [Port, Secs])),
    File.

same_name_at_once() ->
    [{doc, "A second load of a --name still running exits 2 naming its holder; the first ends 0."}].
same_name_at_once(Config) ->
    Out = ?config(priv_dir, Config),
    Args = ["load", scenario(Config, 4), "--name", "twice", "--out", Out, "--quiet"],
    First = beamscale_test_cli:open(Args),
    {os_pid, OsPid} = erlang:port_info(First, os_pid),
    ok = wait_rows(filename:join([Out, "twice", "load.csv"]), 1, ?ROWS_TRIES),
    {2, Text} = beamscale_test_cli:run(Args),
    Holder = lists:flatten(io_lib:format("is in use by a load of OS pid ~b", [OsPid])),
    ?assertNotEqual(nomatch, string:find(Text, Holder), Text),
    {0, _} = beamscale_test_cli:wait(First, ?RUN_TIMEOUT),
    %% The lock went with the first load: the name is free again (--replace: the directory is
    %% that load's).
    {0, _} = beamscale_test_cli:run(Args ++ ["--replace"]).

%% Wait until `File' has `N' rows after its header.
wait_rows(_File, _N, 0) -> {error, no_rows};
wait_rows(File, N, Tries) ->
    Rows = case file:read_file(File) of
               {ok, Bin} -> length(binary:matches(Bin, <<"\n">>)) - 1;
               {error, _} -> 0
           end,
    case Rows >= N of
        true -> ok;
        false -> timer:sleep(100), wait_rows(File, N, Tries - 1)
    end.
