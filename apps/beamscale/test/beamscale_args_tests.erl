-module(beamscale_args_tests).
-include_lib("eunit/include/eunit.hrl").

spec() ->
    [{config, "--config", string, ""}, {n, "--iterations", integer, ""},
     {bench, "--bench", {list, string}, ""}, {quiet, "--quiet", flag, ""}].

parse_test() ->
    ?assertEqual({ok, #{opts => #{config => "a.config", n => 3, bench => ["x", "y", "z"],
                                  quiet => true},
                        args => ["pos"]}},
                 beamscale_args:parse(spec(), ["--config", "a.config", "pos", "--iterations=3",
                                               "--bench", "x,y", "--bench", "z", "--quiet"])).

double_dash_test() ->
    ?assertEqual({ok, #{opts => #{}, args => ["--quiet"]}},
                 beamscale_args:parse(spec(), ["--", "--quiet"])).

errors_test() ->
    ?assertEqual({error, {beamscale_args, {unknown_option, "--nope"}}},
                 beamscale_args:parse(spec(), ["--nope"])),
    ?assertEqual({error, {beamscale_args, {missing_value, "--config"}}},
                 beamscale_args:parse(spec(), ["--config"])),
    ?assertEqual({error, {beamscale_args, {not_an_integer, "--iterations", "x"}}},
                 beamscale_args:parse(spec(), ["--iterations", "x"])),
    ?assertEqual({error, {beamscale_args, {unknown_option, "--quiet=yes"}}},
                 beamscale_args:parse(spec(), ["--quiet=yes"])).

number_test() ->
    Spec = [{pct, "--pct", number, ""}],
    Value = fun(V) -> beamscale_args:parse(Spec, ["--pct", V]) end,
    ?assertMatch({ok, #{opts := #{pct := 10}}}, Value("10")),
    ?assertMatch({ok, #{opts := #{pct := 2.5}}}, Value("2.5")),
    ?assertMatch({ok, #{opts := #{pct := 0.5}}}, Value(".5")),
    ?assertEqual({error, {beamscale_args, {not_a_number, "--pct", "ten"}}}, Value("ten")).

%% A declared default is appended to the help, formatted by type, and is what get/3 gives.
declared_default_test() ->
    Spec = [{time, "--time", number, "seconds", {value, 0.5}},
            {out, "--out", string, "where", {value, "runs"}},
            {bench, "--bench", {list, string}, "which", {value, ["a", "b"]}},
            {seed, "--seed", integer, "seed", {text, "drawn"}}],
    ?assertEqual(["seconds (default 0.5)", "where (default runs)", "which (default a,b)",
                  "seed (default: drawn)"], [beamscale_args:help(O) || O <- Spec]),
    ?assertEqual(#{time => 0.5, out => "runs", bench => ["a", "b"]},
                 beamscale_args:defaults(Spec)),
    ?assertEqual(2, beamscale_args:get(time, #{time => 2}, Spec)),
    ?assertEqual("runs", beamscale_args:get(out, #{}, Spec)),
    ?assertEqual({ok, #{opts => #{time => 1}, args => []}},
                 beamscale_args:parse(Spec, ["--time", "1"])).
