-module(beamscale_code_tests).
-include_lib("eunit/include/eunit.hrl").

%% Object code a node refuses (as OTP 29 refuses some of OTP 25's) is compiled again there from
%% the abstract code the beam carries. Here the refusal is made: the Code chunk is garbage.
recompile_refused_code_test() ->
    Mod = beamscale_code_tests_refused,
    Bad = with_garbage_code(module_beam(Mod, [debug_info])),
    ?assertEqual({error, badfile}, code:load_binary(Mod, "refused.erl", Bad)),
    ?assertEqual(ok, beamscale_code:load(node(), [{Mod, "refused.erl", Bad}])),
    ?assertEqual(42, Mod:answer()),
    unload(Mod).

%% Without debug_info there is nothing to compile from: the refusal is said, not hidden.
refused_without_debug_info_test() ->
    Mod = beamscale_code_tests_bare,
    Bad = with_garbage_code(module_beam(Mod, [])),
    {error, {beamscale_code, Why}} = beamscale_code:load(node(), [{Mod, "bare.erl", Bad}]),
    ?assertEqual({load, node(), Mod, {badfile, no_debug_info}}, Why),
    Line = lists:flatten(beamscale_code:format_error(Why)),
    ?assertNotEqual(nomatch, string:find(Line, "no_debug_info")).

module_beam(Mod, Opts) ->
    Forms = [{attribute, 1, module, Mod}, {attribute, 2, export, [{answer, 0}]},
             {function, 3, answer, 0, [{clause, 3, [], [], [{integer, 3, 42}]}]}],
    {ok, Mod, Bin} = compile:forms(Forms, [binary | Opts]),
    Bin.

with_garbage_code(Bin) ->
    {ok, _Mod, Chunks} = beam_lib:all_chunks(Bin),
    {ok, Bad} = beam_lib:build_module(
                  [case C of {"Code", _} -> {"Code", <<0:256>>}; _ -> C end || C <- Chunks]),
    Bad.

unload(Mod) ->
    _ = code:purge(Mod),
    _ = code:delete(Mod),
    _ = code:purge(Mod),
    ok.
