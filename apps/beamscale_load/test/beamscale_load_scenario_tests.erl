%% Scenario validation: good files normalise, bad ones name file, line and key.
-module(beamscale_load_scenario_tests).

-include_lib("eunit/include/eunit.hrl").

check(Text) ->
    {ok, Entries} = beamscale_format_terms:parse(Text),
    case beamscale_load_scenario:check("s.scenario", Entries) of
        {ok, S} -> {ok, S};
        {error, E} -> {error, lists:flatten(beamscale_load_scenario:format_error(E))}
    end.

-define(TARGETS, "{targets, [{sut, #{node => 'a@127.0.0.1'}},\n"
                 " {web, #{address => \"127.0.0.1:80\"}}]}.\n").
-define(PHASES, "{phases, [{p1, #{duration_s => 2, rate => 10}}]}.\n").

good_test() ->
    {ok, S} = check(?TARGETS ++ ?PHASES ++
                    "{sessions, [{s, #{steps => [{transaction, t, [{rpc, #{target => sut, "
                    "call => {m, f, []}}}, {think, 5},"
                    " {loop, 2, [{http, #{target => web}}]}]}]}}]}.\n"),
    #{phases := [#{rate := 10.0, max_users := infinity}], drain_s := 10, time_limit_s := 12,
      transactions := [t], sessions := [#{weight := 1, steps := [{transaction, t, Steps}]}]} = S,
    [{request, beamscale_load_rpc, sut, _, 5000}, {think, {constant, 5}},
     {loop, 2, [{request, beamscale_load_http, web, #{bytes := Bytes}, 5000}]}] = Steps,
    ?assertMatch(<<"GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n", _/binary>>, Bytes).

%% Node targets are sampled by default, host:port ones have no node; load nodes default to 0.
sample_and_load_nodes_test() ->
    Sess = "{sessions, [{s, #{steps => [{think, 1}]}}]}.\n",
    {ok, #{sample := [sut], load_nodes := 0}} = check(?TARGETS ++ ?PHASES ++ Sess),
    {ok, #{sample := [], load_nodes := 3}} =
        check(?TARGETS ++ ?PHASES ++ Sess ++ "{sample, []}.\n{load_nodes, 3}.\n"),
    {ok, #{load_nodes := [#{host := "127.0.0.1", args := []},
                          #{host := "127.0.0.1", args := ["-p", "22"], user := "me"}]}} =
        check(?TARGETS ++ ?PHASES ++ Sess ++ "{load_nodes, [\"127.0.0.1\", {\"127.0.0.1\", "
              "#{args => [\"-p\", \"22\"], user => \"me\"}}]}.\n").

interarrival_test() ->
    {ok, #{phases := [#{rate := R}]}} =
        check("{targets, [{t, #{node => n@h}}]}.\n{phases, [{p, #{duration_s => 1, "
              "interarrival_ms => 4}}]}.\n{sessions, [{s, #{steps => [{think, 1}]}}]}.\n"),
    ?assertEqual(250.0, R).

%% A phase waiting for its users' end (Tsung's wait_all_sessions_end) adds a drain to the
%% default hard limit; the last one's wait changes nothing.
wait_sessions_end_test() ->
    Head = "{targets, [{t, #{node => n@h}}]}.\n{sessions, [{s, #{steps => [{think, 1}]}}]}.\n",
    {ok, #{phases := [#{wait_sessions_end := true}, P2], time_limit_s := 23}} =
        check(Head ++ "{phases, [{a, #{duration_s => 1, rate => 1, wait_sessions_end => true}},"
              " {b, #{duration_s => 2, rate => 1, wait_sessions_end => false}}]}.\n"),
    ?assertNot(maps:is_key(wait_sessions_end, P2)),
    {ok, #{time_limit_s := 11}} =
        check(Head ++ "{phases, [{a, #{duration_s => 1, rate => 1, "
              "wait_sessions_end => true}}]}.\n"),
    ?assertEqual({error, "s.scenario:3: key phases.a.wait_sessions_end: expected true or false"},
                 check(Head ++ "{phases, [{a, #{duration_s => 1, rate => 1, "
                       "wait_sessions_end => yes}}]}.\n")).

errors_test_() ->
    Sess = "{sessions, [{s, #{steps => [{think, 1}]}}]}.\n",
    [?_assertEqual({error, "s.scenario:4: key phases.p1.rate: expected users per second "
                           "from 2.32831e-7 (one per 2^32-1 ms) to 1000000"},
                   check(?TARGETS ++ "{phases, [{p1, #{duration_s => 2,\n rate => -1}}]}.\n"
                         ++ Sess)),
     ?_assertEqual({error, "s.scenario:4: key sessions.s.steps.rpc.target: unknown target"},
                   check(?TARGETS ++ ?PHASES ++
                         "{sessions, [{s, #{steps => [{rpc, #{target => nope}}]}}]}.\n")),
     ?_assertEqual({error, "s.scenario:4: key sessions.s.steps.http.target: http needs a "
                           "host:port target"},
                   check(?TARGETS ++ ?PHASES ++
                         "{sessions, [{s, #{steps => [{http, #{target => sut}}]}}]}.\n")),
     ?_assertEqual({error, "s.scenario:4: key sesions: unknown key (known: targets, phases, "
                           "scenarios, sessions, drain_s, time_limit_s, sample, load_nodes, slo, "
                           "files, source_ips, monitors, thresholds)"},
                   check(?TARGETS ++ ?PHASES ++ "{sesions, []}.\n")),
     ?_assertMatch({error, "s.scenario:5: key slo: bad term \"p98<5ms\"" ++ _},
                   check(?TARGETS ++ ?PHASES ++ "{sessions, [{s, #{steps => [{think, 1}]}}]}.\n"
                         "{slo, \"p99<5ms,p98<5ms\"}.\n")),
     ?_assertEqual({error, "s.scenario:1: key sessions: missing"}, check(?TARGETS ++ ?PHASES)),
     ?_assertEqual({error, "s.scenario:5: key sample: unknown target nope"},
                   check(?TARGETS ++ ?PHASES ++ Sess ++ "{sample, [sut, nope]}.\n")),
     ?_assertEqual({error, "s.scenario:5: key load_nodes: 127.0.0.1: user: expected a string "
                           "not starting with -"},
                   check(?TARGETS ++ ?PHASES ++ Sess
                         ++ "{load_nodes, [{\"127.0.0.1\", #{user => u}}]}.\n")),
     ?_assertEqual({error, "s.scenario:1: key targets.web.address: expected \"host:port\", "
                           "\"http://host[:port]\" or \"https://host[:port]\""},
                   check("{targets, [{web, #{address => \"nohost\"}}]}.\n" ++ ?PHASES ++ Sess))].

%% Issue 31: a rate the arrival process cannot compute, and names the status line cannot show.
hostile_values_test_() ->
    Sess = "{sessions, [{s, #{steps => [{think, 1}]}}]}.\n",
    Name = "a name of printable Latin-1 characters (the status line and the page show it): "
           "refused",
    [?_assertMatch({error, "s.scenario:3: key phases.p1.rate: expected users per second from"
                           ++ _},
                   check(?TARGETS ++ "{phases, [{p1, #{duration_s => 2, rate => 5.0e-324}}]}.\n"
                         ++ Sess)),
     %% The name itself is shown as ~tp shows it (escaped or not, by the emulator's +pc).
     ?_assertMatch({error, "s.scenario:3: key phases.'p" ++ _},
                   check(?TARGETS ++ "{phases, [{'p\x{444}', #{duration_s => 2, rate => 1}}]}.\n"
                         ++ Sess)),
     ?_assert(lists:suffix(Name, element(2, check(?TARGETS ++ "{phases, [{'p\x{444}', "
                                                   "#{duration_s => 2, rate => 1}}]}.\n"
                                                   ++ Sess)))),
     ?_assertEqual({error, "s.scenario:4: key sessions.s.steps.transaction.'a\\tb': " ++ Name},
                   check(?TARGETS ++ ?PHASES ++ "{sessions, [{s, #{steps => [{transaction, "
                         "'a\\tb', [{think, 1}]}]}}]}.\n")),
     ?_assertEqual({error, {4, "a number of more than 300 digits (301): refused"}},
                   beamscale_format_terms:parse(?TARGETS ++ ?PHASES ++ "{x, "
                                                ++ lists:duplicate(301, $1) ++ "}.\n")),
     %% Latin-1 names are shown as written: kept.
     ?_assertMatch({ok, _}, check(?TARGETS ++ "{phases, [{'fase_ñ', #{duration_s => 2, "
                                  "rate => 1.0e-6}}]}.\n" ++ Sess))].

phase_at_test() ->
    {ok, S} = check("{targets, [{t, #{node => n@h}}]}.\n"
                    "{phases, [{a, #{duration_s => 1, rate => 1}},"
                    " {b, #{duration_s => 2, rate => 1}}]}.\n"
                    "{sessions, [{s, #{steps => [{think, 1}]}}]}.\n"),
    ?assertMatch(#{name := a}, beamscale_load_scenario:phase_at(S, 0.5)),
    ?assertMatch(#{name := b}, beamscale_load_scenario:phase_at(S, 2.9)),
    ?assertEqual(drain, beamscale_load_scenario:phase_at(S, 3.0)).

%% A step of no known form: the error names every form of the step table, the newer steps too.
unknown_step_names_every_form_test() ->
    {error, Msg} = check(?TARGETS ?PHASES "{sessions, [{s, #{steps => [{gopher, 1, 2}]}}]}.\n"),
    ?assertMatch("s.scenario:4: key sessions.s.steps: expected {" ++ _, Msg),
    Forms = beamscale_load_scenario_steps:forms(),
    [?assertNotEqual(nomatch, string:find(Msg, F)) || {_, F} <- Forms],
    [?assert(lists:keymember(T, 1, Forms)) || T <- [rendezvous, set_option, interaction,
                                                     disconnect, wait, setvars, foreach]].

%% The table lacks no step `step/2' takes: the tags its clauses match (a tuple's first element,
%% or `element(1, S) =:= Tag' in a guard), read from the module's abstract code.
step_table_is_complete_test() ->
    M = beamscale_load_scenario_steps,
    {ok, {M, [{abstract_code, {_, Forms}}]}} = beam_lib:chunks(code:which(M), [abstract_code]),
    [Clauses] = [Cs || {function, _, step, 2, Cs} <- Forms],
    Tags = lists:usort(lists:append([clause_tags(C) || C <- Clauses])),
    ?assert(length(Tags) > 10),
    Known = [T || {T, _} <- beamscale_load_scenario_steps:forms()],
    %% A `{Kind, Spec}' request is matched by a variable tag, not listed by name.
    ?assertEqual([], Tags -- Known).

clause_tags({clause, _, [{tuple, _, [{atom, _, Tag} | _]}, _], _, _}) -> [Tag];
clause_tags({clause, _, _, Guards, _}) ->
    [Tag || G <- Guards, T <- G, Tag <- guard_tags(T)].

guard_tags({op, _, Op, L, R}) when Op =:= 'orelse'; Op =:= 'andalso'; Op =:= 'or';
                                   Op =:= 'and' -> guard_tags(L) ++ guard_tags(R);
guard_tags({op, _, '=:=', {call, _, {atom, _, element}, [{integer, _, 1}, _]}, {atom, _, T}}) ->
    [T];
guard_tags(_) -> [].

%% Several scenarios side by side (`scenarios'): phases with a start each, sessions tagged by
%% the scenario's name, the phase of a moment; bad ones named with file, line and key.
-define(MANY_HEAD, "{targets, [{t, #{node => n@h}}]}.\n").
-define(MANY_SESSIONS, "{sessions, [{s, #{tags => #{team => \"a\"}, steps => [{rpc, #{call => "
                  "{m, f, []}}}]}},\n {q, #{weight => 0, steps => [{rpc, #{call => "
                  "{m, g, []}}}]}}]}.\n").

many() ->
    check(?MANY_HEAD ++ "{scenarios, [{a, #{executor => per_user_iterations, users => 2, "
          "iterations => 3, duration_s => 10}},\n"
          " {b, #{executor => constant_arrival_rate, rate => 5, duration_s => 4, "
          "pre_allocated => 2, start_s => 8, exec => q, tags => #{tier => \"gold\"}}}]}.\n"
          ++ ?MANY_SESSIONS).

many_read_test() ->
    {ok, S} = many(),
    #{phases := [#{name := a, start_s := 0}, #{name := b, start_s := 8, sessions := [{q, 1}]}],
      scenarios := [{a, [#{name := s, steps := [{tagged, A, _}]}]},
                    {b, [#{name := q, steps := [{tagged, B, _}]}]}],
      time_limit_s := 22, counts := Counts} = S,
    ?assertEqual([<<"scenario=a">>, <<"team=a">>], A),
    ?assertEqual([<<"scenario=b">>, <<"tier=gold">>], B),
    ?assert(lists:member(<<"dropped_iterations">>, Counts)),
    ?assertEqual(12, beamscale_load_scenario:duration_s(S)).

%% At a moment several scenarios may run, or none: named together, rates summed.
many_phase_at_test() ->
    {ok, S} = many(),
    ?assertMatch(#{name := <<"a">>, rate := 0.0}, beamscale_load_scenario:phase_at(S, 1)),
    ?assertMatch(#{name := <<"a+b">>, rate := 5.0}, beamscale_load_scenario:phase_at(S, 9)),
    ?assertMatch(#{name := <<"b">>}, beamscale_load_scenario:phase_at(S, 11)),
    ?assertEqual(drain, beamscale_load_scenario:phase_at(S, 12)),
    {ok, Gap} = check(?MANY_HEAD ++ "{scenarios, [{a, #{duration_s => 1, rate => 1}},\n"
                      " {b, #{duration_s => 1, rate => 2, start_s => 3}}]}.\n" ++ ?MANY_SESSIONS),
    ?assertMatch(#{name := <<"none">>, rate := 0.0}, beamscale_load_scenario:phase_at(Gap, 2)).

many_refused_test_() ->
    Bad = fun(Scenarios) ->
                  check(?MANY_HEAD ++ "{scenarios, " ++ Scenarios ++ "}.\n" ++ ?MANY_SESSIONS)
          end,
    CU = "executor => constant_users, users => 1, duration_s => 1",
    [?_assertEqual({error, "s.scenario:2: key scenarios.a: given twice: each scenario has a "
                    "name of its own"}, Bad("[{a, #{" ++ CU ++ "}}, {a, #{" ++ CU ++ "}}]")),
     ?_assertMatch({error, "s.scenario:2: key scenarios.a.rate: unknown key of constant_users "
                    "(known: executor, sessions, users, duration_s, start_s, tags, exec)"},
                   Bad("[{a, #{" ++ CU ++ ", rate => 1}}]")),
     ?_assertEqual({error, "s.scenario:2: key scenarios.a.exec: give exec or sessions, not "
                           "both"}, Bad("[{a, #{" ++ CU ++ ", exec => s, sessions => [{s, 1}]}}]")),
     ?_assertEqual({error, "s.scenario:2: key scenarios.a.sessions: no session nope"},
                   Bad("[{a, #{" ++ CU ++ ", exec => nope}}]")),
     ?_assertEqual({error, "s.scenario:2: key scenarios.a.start_s: expected a number of seconds "
                           "from 0"}, Bad("[{a, #{" ++ CU ++ ", start_s => -1}}]")),
     ?_assertEqual({error, "s.scenario:2: key scenarios.a.start_s: 30 s is not before the time "
                           "limit, 5 s"},
                   Bad("[{a, #{" ++ CU ++ ", start_s => 30}}]}.\n{time_limit_s, 5")),
     ?_assertMatch({error, "s.scenario:2: key scenarios: expected a non-empty list" ++ _},
                   Bad("[]")),
     ?_assertEqual({error, "s.scenario:2: key scenarios: give phases or scenarios, not both"},
                   Bad("[{a, #{" ++ CU ++ "}}]}.\n{phases, [{p, #{duration_s => 1, rate => 1}}]"))].

%% The implicit tag is the scenario's: a request tagged scenario=... of its own is refused.
many_own_scenario_tag_test() ->
    {error, Msg} = check(?MANY_HEAD ++ "{scenarios, [{a, #{duration_s => 1, rate => 1}}]}.\n"
                         "{sessions, [{s, #{steps => [{rpc, #{call => {m, f, []}, "
                         "tags => #{scenario => \"x\"}}}]}}]}.\n"),
    ?assertMatch("s.scenario:2: key scenarios.a.tags: session s tags its requests scenario="
                 ++ _, Msg).
