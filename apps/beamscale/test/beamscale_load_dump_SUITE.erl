%% `--dump N' (Tsung's dumptraffic) through the command line: what dump.log holds and its
%% bounds, against a real HTTP server.
-module(beamscale_load_dump_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, dump/0, dump/1]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [dump].

file(Config, Name, Text) ->
    Path = filename:join(?config(priv_dir, Config), Name),
    ok = file:write_file(Path, Text),
    Path.

%% `--dump 3': the run's first three exchanges and the first of its one error reason, the
%% reply's bytes cut at 2 KiB and shown escaped where not printable.
dump() -> [{doc, "--dump 3 writes 3 exchanges and the error's first to dump.log, cut."}].
dump(Config) ->
    Body = <<0, 1, 255, (binary:copy(<<"a">>, 3000))/binary>>,
    {ok, Srv} = beamscale_target_http:start(#{body => Body}),
    try
        Path = file(Config, "dump.scenario", io_lib:format(
            "{targets, [{web, #{address => \"127.0.0.1:~b\"}}]}.\n"
            "{phases, [{p, #{duration_s => 1, rate => 20}}]}.\n"
            "{sessions, [{s, #{steps => [{http, #{target => web, label => \"home\"}},\n"
            "  {http, #{target => web}}, {http, #{target => web}},\n"
            "  {http, #{target => web, status => 404}}]}}]}.\n{sample, []}.\n",
            [beamscale_target_http:port(Srv)])),
        Out = ?config(priv_dir, Config),
        {2, Bad} = beamscale_test_cli:run(["load", Path, "--out", Out, "--dump", "-1"]),
        ?assertNotEqual(nomatch, string:find(Bad, "option --dump: -1 is not a number of "
                                                  "exchanges (0 or more)")),
        {Code, Output} = beamscale_test_cli:run(["load", Path, "--name", "dump_errors_suite",
                                                 "--out", Out, "--quiet", "--dump", "3"]),
        ct:log("~ts", [Output]),
        ?assertEqual(0, Code),
        {ok, Log} = file:read_file(filename:join([Out, "dump_errors_suite", "dump.log"])),
        ct:log("~ts", [Log]),
        Heads = [L || <<"=== ", _/binary>> = L <- binary:split(Log, <<"\n">>, [global])],
        Errors = [H || H <- Heads, binary:match(H, <<"error: http status 200">>) =/= nomatch],
        ?assertEqual(1, length(Errors)),
        %% The error among the first three, or after them.
        ?assert(length(Heads) =:= 3 orelse
                    length(Heads) =:= 4 andalso lists:last(Heads) =:= hd(Errors)),
        ?assertMatch({_, _}, binary:match(Log, <<"http home: ok">>)),
        ?assertMatch({_, _}, binary:match(Log, <<"GET / HTTP/1.1\\r\\n\n">>)),
        ?assertMatch({_, _}, binary:match(Log, <<"(first 2048 shown)">>)),
        ?assertMatch({_, _}, binary:match(Log, <<"\\x00\\x01\\xFFaaa">>))
    after
        beamscale_target_http:stop(Srv)
    end.
