-module(beamscale_micro_source_tests).
-include_lib("eunit/include/eunit.hrl").

%% The generated module compiles and loops; the empty one returns ok.
loop_test() ->
    {ok, B} = beamscale_micro_source:parse("X = 2, X * 21", erlang),
    Spec = #{input => "3", init => "Input + 1", init_runner => "Init * 10"},
    ?assertEqual(42, run(bs_src_t1, B, Spec, 5)),
    ?assertEqual(ok, run(bs_src_t2, {empty, B}, Spec, 5)),
    ?assertEqual(40, state(bs_src_t1)).

%% The loop carries across the calls only what the body names (each a stack slot saved and
%% restored around every call): a body naming `State' still matches against it.
carried_test() ->
    Arity = fun(Text) ->
                    {ok, B} = beamscale_micro_source:parse(Text, erlang),
                    {ok, Forms} = beamscale_micro_source:erlang(bs_src_c, B, #{}),
                    [A || {function, _, loop, A, _} <- Forms]
            end,
    ?assertEqual([2], Arity("lists:seq(1, 20).")),
    ?assertEqual([3], Arity("lists:sum(Input).")),
    ?assertEqual([4], Arity("fun() -> {State, Input} end")),
    ?assertEqual([4], Arity("lists:seq/2")),
    Spec = #{input => "3", init => "Input + 1", init_runner => "Init * 10"},
    {ok, B} = beamscale_micro_source:parse("State + Input", erlang),
    ?assertEqual(43, run(bs_src_c1, B, Spec, 3)),
    {ok, B2} = beamscale_micro_source:parse("State = 41", erlang),
    ?assertError({badmatch, 41}, run(bs_src_c2, B2, Spec, 1)),
    {ok, B3} = beamscale_micro_source:parse("lists:seq(1, 3)", erlang),
    ?assertEqual(ok, run(bs_src_c3, {empty, B3}, #{}, 4)),
    ?assertEqual(ok, run(bs_src_c4, {empty, B3}, #{}, 0)).

mfa_test() ->
    {ok, {mfa, lists, reverse, 1} = B} = beamscale_micro_source:parse("lists:reverse/1", erlang),
    ?assertEqual([3, 2, 1], run(bs_src_t3, B, #{input => "[1, 2, 3]"}, 2)),
    {ok, B2} = beamscale_micro_source:parse("lists:seq/2", erlang),
    ?assertEqual([2, 3], run(bs_src_t4, B2, #{init_runner => "[2, 3]"}, 1)).

%% erlperf's runner tuple is a call of it, not a tuple returned (which read 0 ns); any other
%% constant is refused in words.
runner_tuple_test() ->
    {ok, B} = beamscale_micro_source:parse("{lists, seq, [1, 3]}", erlang),
    ?assertEqual([1, 2, 3], run(bs_src_t5, B, #{}, 2)),
    {ok, B2} = beamscale_micro_source:parse("{erlang, node, []}.", erlang),
    ?assertEqual(node(), run(bs_src_t6, B2, #{}, 1)),
    [?assertMatch({error, {beamscale_micro_source, {constant, _}}},
                  beamscale_micro_source:parse(T, erlang))
     || T <- ["42", "{a, b}", "{lists, seq, [1 | 2]}", "\"text\"."]],
    {error, {M, Why}} = beamscale_micro_source:parse("{a, b}", erlang),
    ?assertMatch({match, _}, re:run(M:format_error(Why), "is a constant")),
    ?assertMatch({ok, {exprs, [_]}}, beamscale_micro_source:parse("X = 1", erlang)).

syntax_error_test() ->
    ?assertMatch({error, {beamscale_micro_source, {syntax, _, _, _}}},
                 beamscale_micro_source:parse("lists:seq(1,", erlang)),
    ?assertMatch({error, {beamscale_micro_source, {syntax, _, _, _}}},
                 beamscale_micro_source:erlang(m, {exprs, []}, #{init => "(("})).

run(Mod, Bench, Spec, N) ->
    {ok, Forms} = beamscale_micro_source:erlang(Mod, Bench, Spec),
    {ok, Mod, Bin} = compile:forms(Forms, [binary]),
    {module, Mod} = code:load_binary(Mod, "x.erl", Bin),
    Input = Mod:input(),
    Mod:run(N, Mod:init_runner(Mod:init(Input), Input), Input).

state(Mod) -> Input = Mod:input(), Mod:init_runner(Mod:init(Input), Input).
