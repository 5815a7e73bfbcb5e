%% The one error path (beamscale_error) and the format_error/1 functions it dispatches to.
-module(beamscale_error_tests).
-include_lib("eunit/include/eunit.hrl").

%% This module is a formatter too: any module exporting format_error/1 is one.
-export([format_error/1]).

format_error(hello) -> "hello in words";
format_error(not_text) -> [self()].

text(Reason) -> binary_to_list(beamscale_error:format(Reason)).

known_module_test() ->
    ?assertEqual("hello in words", text({?MODULE, hello})),
    ?assertEqual("not valid JSON at byte 2", text({beamscale_format_json, {syntax, 2}})),
    ?assertEqual("unexpected argument x", text({beamscale_cmd_run, {unexpected_argument, "x"}})).

%% Not a module, a module without format_error/1, a reason the formatter has no clause for,
%% a formatter giving no text: the reason as a term.
fallback_test() ->
    ?assertEqual("{no_such_module_here,1}", text({no_such_module_here, 1})),
    ?assertEqual("{lists,x}", text({lists, x})),
    ?assertEqual("{beamscale_store,weird}", text({beamscale_store, weird})),
    ?assertEqual("{beamscale_error_tests,not_text}", text({?MODULE, not_text})),
    ?assertEqual("timeout", text(timeout)),
    ?assertEqual("{error,enoent}", text({error, enoent})).

bounded_fallback_test() ->
    Text = text(lists:seq(1, 100000)),
    ?assert(length(Text) < 600),
    ?assertEqual("[1,2,3,", lists:sublist(Text, 7)).

nested_test() ->
    Store = {beamscale_store, {"/r", enoent}},
    Want = "cannot create the run directory /r: no such file or directory",
    ?assertEqual(Want, text(Store)),
    ?assertEqual(Want, text({error, Store})),
    %% The coordinator passes its store's reason on.
    ?assertEqual(Want, text({beamscale_coordinator, Store})),
    %% A formatter without a clause for a reason that is another module's: that module's words.
    ?assertEqual("not valid JSON at byte 1",
                 text({beamscale_store, {beamscale_format_json, {syntax, 1}}})),
    ?assertEqual("cannot start load nodes: {no_host,\"h\"}",
                 text({beamscale_loadtest, {load_nodes, {no_host, "h"}}})).

%% A command's own reasons go to the command, other modules' to those modules.
owner_test() ->
    Own = beamscale_error:format(beamscale_cmd_run, config_and_preset),
    ?assertEqual(<<"--config and --preset exclude each other: give one">>, Own),
    Other = beamscale_error:format(beamscale_cmd_run, {beamscale_format_json, {syntax, 7}}),
    ?assertEqual(<<"not valid JSON at byte 7">>, Other),
    ?assertEqual(<<"bogus">>, beamscale_error:format(beamscale_cmd_run, bogus)).

%% A run directory that cannot be made, as the store reports it.
store_test() ->
    File = filename:join(["/tmp", "beamscale_error_tests." ++ os:getpid()]),
    ok = file:write_file(File, <<>>),
    Dir = filename:join(File, "run"),
    try
        {error, {beamscale_store, Reason}} = beamscale_store:open(Dir),
        Want = "cannot create the run directory " ++ Dir ++ ": not a directory",
        ?assertEqual(Want, lists:flatten(beamscale_store:format_error(Reason))),
        ?assertEqual(Want, text({beamscale_coordinator, {beamscale_store, Reason}}))
    after file:delete(File)
    end.

writer_test() ->
    ?assertEqual("r.json: cannot read run.json: not valid JSON at byte 3",
                 text({beamscale_writer, {run_json, "r.json", {syntax, 3}}})),
    ?assertEqual("s.json: cannot read the run's summary: not a JSON object",
                 text({beamscale_writer, {summary_json, "s.json", not_an_object}})),
    ?assertEqual("s.json: cannot read the run's summary: permission denied",
                 text({beamscale_writer, {summary_json, "s.json", eacces}})).

load_run_test() ->
    Crash = binary_to_list(iolist_to_binary(
                             beamscale_load_run:format_error({crashed, lists:seq(1, 10000)}))),
    ?assertEqual("the load generator crashed: [1,2,", lists:sublist(Crash, 33)),
    ?assert(length(Crash) < 500),
    ?assertEqual("the load did not stop within its time limit plus 10 s: stopped it",
                 text({beamscale_load_run, not_stopped})).

proxy_test() ->
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(L),
    try
        {error, Reason} = beamscale_target_proxy:start(#{backend => {"127.0.0.1", 1},
                                                         port => Port}),
        ?assertEqual("cannot listen on 127.0.0.1: address already in use", text(Reason))
    after gen_tcp:close(L)
    end,
    ?assertEqual("the proxy did not start listening within 5000 ms",
                 text({beamscale_target_proxy, start_timeout})).

mnesia_test() ->
    M = beamscale_target_mnesia,
    ?assertEqual("table subscriber was not loaded within 5 ms", text({M, {table_timeout, 5}})),
    ?assertEqual("cannot create table subscriber: "
                 "Tried to perform op on non-existing (non alive) item: subscriber",
                 text({M, {create_table, {no_exists, subscriber}}})),
    ?assertEqual("nothing to read: table subscriber is empty (0 found before)",
                 text({M, {empty_table, #{found => 0}}})),
    ?assertEqual("cannot start Mnesia: some_atom", text({M, {start, {error, some_atom}}})).

coordinator_test() ->
    ?assertEqual("cannot make this node distributed (is epmd allowed to run?): eaddrinuse",
                 text({beamscale_coordinator, {distribution, eaddrinuse}})).

%% A node that cannot start is said in the emulator's words by every caller that wraps
%% beamscale_node's reason: load targets, load nodes (through the load), study cells.
node_start_words_test() ->
    Words = "bad scheduler busy wait threshold: x",
    Node = {beamscale_node, {node_start, {emulator, 1, list_to_binary(Words)}}},
    Wrapped = [Node,
               {beamscale_loadtest_targets, {sut, Node}},
               {beamscale_loadtest, {load_nodes, Node}},
               {beamscale_study_levels, {beamscale_loadtest_targets, {sut, Node}}}],
    [?assertNotEqual(nomatch, string:find(text(W), Words)) || W <- Wrapped],
    ?assertEqual("the node did not boot within its boot timeout (30 s; under Valgrind, for the "
                 "instruction clock, 600 s)",
                 text({beamscale_node, {node_start, {exit, timeout}}})).
