%% @doc `beamscale compare' of two load runs (`beamscale_cmd_compare' hands them here): their
%% `summary.json' files side by side (`beamscale_stats_load_compare'), printed and written as
%% `compare.html' (`beamscale_report_load_compare'), and the CI gates `--fail-if-p99-above' and
%% `--fail-if-throughput-below' (percent, relative to the first run), and `--threshold' (load's
%% thresholds on B's figures, `beamscale_compare_thresholds'). A load cut short has no
%% summary and is refused (exit 2) naming the file.
-module(beamscale_compare_load).

-export([do/1]).

%% @doc Compare the load runs `A' and `B', print the figures, write the page, apply the gates.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{opts := #{threshold := [T | _] = Texts} = Opts} = Parsed) when is_list(T) ->
    case beamscale_compare_thresholds:parse(Texts) of
        {ok, Ths} -> do(Parsed#{opts := Opts#{threshold := Ths}});
        {error, {Text, Msg}} -> {error, {bad_threshold, Text, Msg}}
    end;
do(#{opts := Opts, args := [A, B]}) ->
    case {beamscale_writer:summary(A), beamscale_writer:summary(B)} of
        {{ok, SA}, {ok, SB}} -> compared(A, B, SA, SB, Opts);
        {{error, _} = E, _} -> E;
        {_, E} -> E
    end.

compared(A, B, SA, SB, Opts) ->
    Rows = beamscale_stats_load_compare:compare(SA, SB),
    Errors = beamscale_stats_load_compare:errors(SA, SB),
    io:put_chars(beamscale_report_load_compare:text(Rows, Errors)),
    Out = maps:get(out, Opts, beamscale_format_rundir:path(B, compare)),
    Html = beamscale_report_load_compare:html(Rows, Errors, #{a => A, b => B, summary_a => SA,
                                                             summary_b => SB}),
    ok = beamscale_store:write_file(Out, Html),
    io:format("~ts~n", [Out]),
    Gates = [{G, Pct} || {G, Opt} <- [{p99_above, fail_if_p99_above},
                                      {throughput_below, fail_if_throughput_below}],
                         {ok, Pct} <- [maps:find(Opt, Opts)]],
    Verdicts = beamscale_compare_thresholds:verdicts(maps:get(threshold, Opts, []), SB),
    io:put_chars(beamscale_loadtest_thresholds:table(Verdicts)),
    case [failed(G, R) || {G, R} <- beamscale_stats_load_compare:gates(Rows, Gates)]
         ++ [["--threshold ", T, ": B's ", M] || #{ok := false, threshold := T, measured := M}
                                                     <- Verdicts] of
        [] -> ok;
        Failed -> {failed, lists:join("; ", Failed)}
    end.

failed({p99_above, Pct}, #{ratio := R, low := L}) ->
    io_lib:format("--fail-if-p99-above ~ts: B's p99 (corrected) is ~tsx A's [~ts, ...], "
                  "above by more than ~ts %", [pct(Pct), fmt(R), fmt(L), pct(Pct)]);
failed({throughput_below, Pct}, #{ratio := R, high := H}) ->
    io_lib:format("--fail-if-throughput-below ~ts: B's throughput is ~tsx A's [..., ~ts], "
                  "below by more than ~ts %", [pct(Pct), fmt(R), fmt(H), pct(Pct)]).

pct(Pct) when is_integer(Pct) -> integer_to_list(Pct);
pct(Pct) -> beamscale_format_float:decimal(Pct).

fmt(V) -> beamscale_report_svg:fmt(V).
