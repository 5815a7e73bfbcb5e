%% The registry of request kinds (beamscale_load_kinds): every kind is a whole plugin, and what
%% the scenario readers say about kinds comes from the registry.
-module(beamscale_load_kinds_tests).

-include_lib("eunit/include/eunit.hrl").

every_kind_exports_the_callbacks_test_() ->
    [?_assertEqual({M, []}, {M, beamscale_load_request:missing_callbacks(M)})
     || M <- beamscale_load_kinds:all()].

names_are_unique_and_found_test() ->
    Names = beamscale_load_kinds:names(),
    ?assertEqual(length(Names), length(lists:usort(Names))),
    [?assertEqual({ok, M}, beamscale_load_kinds:by_name(M:name()))
     || M <- beamscale_load_kinds:all()].

tsung_types_and_elements_test() ->
    [begin
         ?assertEqual({ok, M}, beamscale_load_kinds:by_tsung_type(Type)),
         ?assertEqual({ok, M}, beamscale_load_kinds:by_element(El)),
         ?assert(erlang:function_exported(M, from_tsung, 3))
     end || M <- beamscale_load_kinds:all(),
        #{type := Type, element := El} <- [beamscale_load_kinds:tsung(M)]],
    ?assertEqual(error, beamscale_load_kinds:by_tsung_type("ts_job")).

features_test() ->
    [?assertEqual([], beamscale_load_kinds:features(M)
                          -- [extract, match, cookies, auth, subst, headers, head])
     || M <- beamscale_load_kinds:all()],
    ?assert(beamscale_load_kinds:allows(beamscale_load_http, cookies)),
    ?assertNot(beamscale_load_kinds:allows(beamscale_load_tcp, extract)).

%% An unknown kind's error lists every registered name.
unknown_kind_lists_registry_test() ->
    Text = "{targets, [{t, #{address => \"127.0.0.1:1\"}}]}.\n"
           "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
           "{sessions, [{s, #{steps => [{gopher, #{}}]}}]}.\n",
    {ok, Entries} = beamscale_format_terms:parse(Text),
    {error, E} = beamscale_load_scenario:check("t", Entries),
    Msg = lists:flatten(beamscale_load_scenario:format_error(E)),
    ?assertMatch("t:3: key sessions.s.steps.gopher: unknown step" ++ _, Msg),
    [?assertNotEqual(nomatch, string:find(Msg, atom_to_list(N)))
     || N <- beamscale_load_kinds:names()].

%% A kind's own reason is in its own words; a reason naming another module is not called.
reasons_delegate_test() ->
    ?assertEqual(<<"connect on a WebSocket already open">>,
                 beamscale_load_reasons:text({beamscale_load_websocket, already_connected})),
    ?assertEqual(<<"pgsql 42P01: relation \"nope\" does not exist">>,
                 beamscale_load_reasons:text({pgsql, <<"42P01">>,
                                              <<"relation \"nope\" does not exist">>})),
    ?assertEqual(<<"{lists,reverse}">>, beamscale_load_reasons:text({lists, reverse})).

wait_step_checked_test() ->
    Targets = #{t => #{host => "h", port => 1}},
    ?assertEqual({wait, beamscale_load_raw, t, 100},
                 beamscale_load_push:check(#{kind => raw, timeout_ms => 100}, Targets)),
    ?assertThrow({bad, [wait, kind], "http takes no pushed data (kinds that do: raw, mqtt" ++ _},
                 beamscale_load_push:check(#{kind => http, timeout_ms => 100}, Targets)),
    ?assertThrow({bad, [wait, timeout_ms], _},
                 beamscale_load_push:check(#{kind => raw}, Targets)).

%% A kind states only what differs: the declarations it leaves out have their defaults.
defaults_test() ->
    ?assertNot(erlang:function_exported(beamscale_load_tcp, sockets, 1)),
    ?assertEqual([], beamscale_load_kinds:features(beamscale_load_tcp)),
    ?assertEqual(1, beamscale_load_kinds:sockets(beamscale_load_tcp, #{})),
    ?assertEqual(none, beamscale_load_kinds:tsung(beamscale_load_tcp)),
    ?assertEqual(<<"{refused,1}">>, iolist_to_binary(
                                      beamscale_load_kinds:format_error(beamscale_load_tcp,
                                                                        {refused, 1}))),
    %% What a kind says wins.
    ?assertEqual(0, beamscale_load_kinds:sockets(beamscale_load_rpc, #{})),
    ?assertEqual(<<"connect on a WebSocket already open">>,
                 iolist_to_binary(beamscale_load_kinds:format_error(beamscale_load_websocket,
                                                                    already_connected))).
