%% JSONPath parser (PropEr: a path printed from steps parses back to them; any text parses or
%% is refused, never crashes) and the XPath subset over hostile and ordinary bodies.
-module(beamscale_load_jsonpath_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-include("beamscale_load_code_first.hrl").

name() -> ?LET(L, non_empty(list(oneof([range($a, $z), range($A, $Z), $_]))), list_to_binary(L)).

step() -> oneof([{key, name()}, {index, range(-5, 50)}, all]).

print(Steps) ->
    iolist_to_binary(["$" | [case S of
                                 {key, K} -> [".", K];
                                 {index, I} -> ["[", integer_to_list(I), "]"];
                                 all -> "[*]"
                             end || S <- Steps]]).

prop_round_trip() ->
    ?FORALL(Steps, list(step()), beamscale_load_jsonpath:parse(print(Steps)) =:= {ok, Steps}).

prop_total() ->
    ?FORALL(Text, binary(),
            case beamscale_load_jsonpath:parse(Text) of
                {ok, L} -> is_list(L);
                {error, Msg} -> io_lib:printable_unicode_list(Msg)
            end).

%% 1 000 cases take seconds on a loaded host: more than EUnit's default 5 s.
properties_test_() ->
    {timeout, 120, fun() -> [?assert(proper:quickcheck(P, [{numtests, 500}, {to_file, user}]))
                             || P <- [prop_round_trip(), prop_total()]] end}.

value_test() ->
    J = <<"{\"a\":{\"b\":[10,{\"c\":\"x\"}],\"d\":[{\"b\":1},{\"b\":2}]},\"uid\":\"u7\"}">>,
    V = fun(E) -> {ok, P} = beamscale_load_jsonpath:parse(E), beamscale_load_jsonpath:value(P, J)
        end,
    ?assertEqual({ok, <<"10">>}, V("$.a.b[0]")),
    ?assertEqual({ok, <<"1">>}, V("$.a.d[*].b")),
    ?assertEqual({ok, <<"u7">>}, V("uid")),
    ?assertEqual({ok, <<"x">>}, V("$.a.b[1].c")),
    ?assertEqual({ok, <<"{\"c\":\"x\"}">>}, V("$.a.b[-1]")),
    ?assertEqual(error, V("$.nope")),
    ?assertEqual(error, beamscale_load_jsonpath:value([], <<"{not json">>)),
    ?assertMatch({error, _}, beamscale_load_jsonpath:parse("$.a[")).

%% Each bounded parse may run to its 2 s limit (an unclosed body does): more than EUnit's
%% default 5 s on a loaded host.
xpath_test_() -> {timeout, 60, fun xpath/0}.

xpath() ->
    B = <<"<?xml version=\"1.0\"?><r><t><token>T1</token></t><z id=\"k\" v=\"V\">x</z>"
          "<z id=\"j\" v=\"W\">y</z><never_an_atom_q7x>n</never_an_atom_q7x></r>">>,
    X = fun(E) -> {ok, C} = beamscale_load_xpath:compile(E), beamscale_load_xpath:eval(C, B) end,
    ?assertEqual({ok, <<"T1">>}, X("/r/t/token/text()")),
    ?assertEqual({ok, <<"V">>}, X("//z/@v")),
    ?assertEqual({ok, <<"W">>}, X("//z[@id='j']/@v")),
    ?assertEqual(error, X("//nothere/text()")),
    %% A name in the body becomes no atom.
    ?assertError(badarg, list_to_existing_atom("never_an_atom_q7x")),
    ?assertMatch({error, _}, beamscale_load_xpath:compile("//a[")),
    %% Entities are never expanded: a DOCTYPE is refused, so is a body that is not XML.
    {ok, A} = beamscale_load_xpath:compile("//a/text()"),
    Laughs = <<"<!DOCTYPE a [<!ENTITY x \"xxxxxxxxxx\"><!ENTITY y \"&x;&x;&x;&x;&x;\">]>"
               "<a>&y;</a>">>,
    ?assertEqual(error, beamscale_load_xpath:eval(A, Laughs)),
    ?assertEqual(error, beamscale_load_xpath:eval(A, <<"<a>unclosed">>)),
    ?assertEqual(error, beamscale_load_xpath:eval(A, binary:copy(<<"x">>, 2 * 1024 * 1024))).

header_param_test() ->
    H = <<"Digest realm=\"be am\", nonce=\"abc\", qop=auth">>,
    ?assertEqual({ok, <<"be am">>}, beamscale_load_extract:header_param(<<"realm">>, H)),
    ?assertEqual({ok, <<"auth">>}, beamscale_load_extract:header_param(<<"qop">>, H)),
    ?assertEqual(error, beamscale_load_extract:header_param(<<"opaque">>, H)).

%% The terms form of digest, OAuth, JSONPath, XPath and a phase mix reads; a mix naming no
%% session is refused at its line.
example_test() ->
    {ok, #{phases := [_, #{sessions := Mix}]}} =
        beamscale_load_scenario:load(filename:join(root(), "examples/auth.scenario")),
    ?assertEqual([{digest, 1}, {oauth, 3}], Mix).

mix_test() ->
    S = [#{name => a, weight => 1, steps => []}, #{name => b, weight => 0, steps => []}],
    ?assertEqual([b], [N || #{name := N} <- beamscale_load_scenario_mix:sessions(
                                              #{sessions => [{a, 0}, {b, 2}]}, S)]),
    ?assertEqual([a], [N || #{name := N} <- beamscale_load_scenario_mix:sessions(#{}, S)]),
    ?assertThrow({bad, [p, sessions], "no session c"},
                 beamscale_load_scenario_mix:check([#{name => p, sessions => [{c, 1}]}], S)).

root() -> lists:foldl(fun(_, D) -> filename:dirname(D) end, ?FILE, [1, 2, 3, 4]).

%% Issue 31: a hostile body is decoded within bounds of heap and time, in a process of its
%% own: 1 MB of nested arrays (30 MB and 2 s unbounded) gives no value, and the caller's heap
%% stays small.
hostile_body_test_() ->
    {timeout, 30, fun() ->
        N = 500000,
        Nested = iolist_to_binary([lists:duplicate(N, $[), lists:duplicate(N, $])]),
        {ok, P} = beamscale_load_jsonpath:parse("$.a"),
        true = erlang:garbage_collect(),
        {memory, Before} = process_info(self(), memory),
        T0 = erlang:monotonic_time(millisecond),
        ?assertEqual(error, beamscale_load_jsonpath:value(P, Nested)),
        ct_or_io("nested arrays refused in ~b ms",
                 [erlang:monotonic_time(millisecond) - T0]),
        true = erlang:garbage_collect(),
        {memory, After} = process_info(self(), memory),
        ?assert(After - Before < 1024 * 1024),
        %% An ordinary body still gives its value.
        ?assertEqual({ok, <<"x">>}, beamscale_load_jsonpath:value(P, <<"{\"a\":\"x\"}">>))
    end}.

ct_or_io(Fmt, Args) -> io:format(user, Fmt ++ "~n", Args).
