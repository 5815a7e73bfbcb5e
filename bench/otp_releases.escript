#!/usr/bin/env escript
%% The page's "Releases compared" of a run directory as a Markdown table (for docs/otp.md and
%% docs/studies/ets.md), with the sampler's figures an erl did not give. Run from the
%% repository root after `rebar3 compile':
%%   escript bench/otp_releases.escript RUN_DIR [BENCHMARK_PREFIX]
-mode(compile).

main([Dir]) -> main([Dir, ""]);
main([Dir, Prefix]) ->
    ok = code:add_pathsa(filelib:wildcard("_build/default/lib/*/ebin")),
    Rows = beamscale_store:measurements(Dir),
    [pair(P, list_to_binary(Prefix)) || P <- beamscale_stats_otp:compare(Rows)],
    {Erls, Unread} = beamscale_stats_otp:unread(beamscale_store:read_rows(
                                                  filename:join(Dir, "samples.csv"))),
    io:format("~nSampled erls: ~ts. Figures not read on every erl: ~ts~n",
              [lists:join(", ", Erls),
               case Unread of
                   [] -> "none";
                   _ -> lists:join("; ", [[atom_to_list(F), " (", lists:join(", ", Es), ")"]
                                          || {F, Es} <- Unread])
               end]);
main(_) ->
    io:format(standard_error, "usage: escript bench/otp_releases.escript RUN_DIR [PREFIX]~n", []),
    halt(2).

pair(#{base := Base, other := Other, results := Results}, Prefix) ->
    io:format("~n| benchmark | args | sched | ~ts s | ~ts s | ratio (95 % interval) | "
              "which is faster |~n|---|---|---|---|---|---|---|~n", [Base, Other]),
    [row(Base, Other, R) || #{key := {B, _, _, _, _, _, _}} = R <- Results,
                            string:prefix(B, Prefix) =/= nomatch].

row(Base, Other, #{key := {B, Phase, Args, _, ErlArgs, S, _}, median_a := MA,
                   median_b := MB} = R) ->
    Name = case Phase of B -> B; _ -> [B, " ", Phase] end,
    Env = case ErlArgs of <<"default">> -> ""; _ -> [" ", ErlArgs] end,
    io:format("| ~ts | ~ts~ts | ~p | ~.3f | ~.3f | ~ts | ~ts |~n",
              [Name, Args, Env, S, MA, MB, ratio(R),
               beamscale_report_otp:verdict(Base, Other, R)]).

ratio(#{ratio := null}) -> "-";
ratio(#{ratio := X, ratio_low := L, ratio_high := H}) ->
    io_lib:format("~.3f (~.3f-~.3f)", [X, L, H]).
