-module(beamscale_amoc_vars_tests).
-include_lib("eunit/include/eunit.hrl").

%% This module is the scenario whose attributes are read.
-required_variable(#{name => plain, description => "no verification", default_value => 1}).
-required_variable([#{name => one_of, description => "a list", default_value => a,
                      verification => [a, b]},
                    #{name => by_mfa, description => "an mfa", default_value => 2,
                      verification => {?MODULE, positive, 1}},
                    #{name => by_fun, description => "a fun", default_value => "7",
                      verification => fun ?MODULE:to_int/1}]).
-required_variable({old_tuple, "the tuple form", 3, positive}).
-required_variable({no_default, "undefined unless given"}).
-required_variable(#{name => needed, description => "given or refused",
                     verification => {erlang, is_integer, 1}}).
-export([positive/1, to_int/1]).

positive(N) -> is_integer(N) andalso N > 0.
to_int(S) when is_list(S) -> {true, list_to_integer(S)};
to_int(_) -> {false, not_a_string}.

params() ->
    {ok, Ps} = beamscale_amoc_vars:params(?MODULE),
    Ps.

no_env(_) -> false.

resolve(Sets, Env) -> beamscale_amoc_vars:resolve(params(), Sets, Env).

names_test() ->
    ?assertEqual([plain, one_of, by_mfa, by_fun, old_tuple, no_default, needed],
                 [N || #{name := N} <- params()]).

defaults_and_given_test() ->
    ?assertEqual({ok, #{plain => 1, one_of => a, by_mfa => 2, by_fun => 7, old_tuple => 3,
                        no_default => undefined, needed => 4}},
                 resolve(["needed=4"], fun no_env/1)),
    {ok, #{no_default := [x]}} = resolve(["needed=4", "no_default=[x]"], fun no_env/1),
    %% --set before AMOC_*, AMOC_* before the default.
    Env = fun("AMOC_PLAIN") -> "{env}"; ("AMOC_NEEDED") -> "9"; (_) -> false end,
    {ok, #{plain := {env}, needed := 9}} = resolve([], Env),
    {ok, #{plain := set}} = resolve(["plain=set"], Env).

missing_test() ->
    {error, {beamscale_amoc_vars, R}} = resolve([], fun no_env/1),
    ?assertEqual("required variable needed (given or refused) has no value and no default, and "
                 "its verification refuses undefined: give --set needed=VALUE or AMOC_NEEDED",
                 text(R)).

verification_test() ->
    Refused = fun(Sets) ->
                      {error, {beamscale_amoc_vars, R}} = resolve(["needed=1" | Sets],
                                                                  fun no_env/1),
                      text(R)
              end,
    ?assertEqual("required variable one_of = c: its verification failed",
                 Refused(["one_of=c"])),
    ?assertEqual("required variable by_mfa = -1: its verification failed",
                 Refused(["by_mfa=-1"])),
    ?assertEqual("required variable old_tuple = 0: its verification failed",
                 Refused(["old_tuple=0"])),
    ?assertEqual("required variable by_fun = 5: its verification failed: not_a_string",
                 Refused(["by_fun=5"])),
    ?assertMatch("required variable by_fun = \"x\": its verification raised error:badarg",
                 Refused(["by_fun=\"x\""])).

bad_settings_test() ->
    {error, {_, Unknown}} = resolve(["nope=1"], fun no_env/1),
    ?assertEqual("--set nope: not a required variable of the scenario (it declares: plain, "
                 "one_of, by_mfa, by_fun, old_tuple, no_default, needed)", text(Unknown)),
    {error, {_, NoEq}} = resolve(["plain"], fun no_env/1),
    ?assertEqual("--set plain: expected NAME=VALUE", text(NoEq)),
    {error, {_, Env}} = resolve([], fun("AMOC_PLAIN") -> "{"; (_) -> false end),
    ?assertMatch("AMOC_PLAIN={ (variable plain): not an Erlang term: " ++ _, text(Env)).

%% A helper's variables after the scenario's; one name in two modules refused.
helpers_test() ->
    {ok, Ps} = beamscale_amoc_vars:params([beamscale_amoc_helper_mod, ?MODULE]),
    ?assertEqual([helper_var, plain], lists:sublist([N || #{name := N} <- Ps], 2)),
    ?assertMatch({error, {beamscale_amoc_vars,
                          {declared_twice, helper_var, beamscale_amoc_helper_mod,
                           beamscale_amoc_helper_mod}}},
                 beamscale_amoc_vars:params([beamscale_amoc_helper_mod,
                                             beamscale_amoc_helper_mod])).

bad_attribute_test() ->
    ?assertMatch({error, {beamscale_amoc_vars, {bad_attribute, not_a_variable}}},
                 beamscale_amoc_vars:params(beamscale_amoc_bad_attr)).

text(R) -> lists:flatten(beamscale_amoc_vars:format_error(R)).
