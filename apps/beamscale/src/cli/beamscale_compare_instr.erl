%% @doc `beamscale compare' of two runs measured with the instruction clock
%% (`beamscale_cmd_compare' hands them here): their `instructions.csv' counts per key, B against
%% A over launches (`beamscale_stats_instr:compare_runs/2'), printed with the clock named and
%% written as `compare.html' (`beamscale_report_compare_instr'); `--fail-if-slower PCT' fails
%% (exit 1) when B counts more than PCT % more instructions per call, the ranges apart.
-module(beamscale_compare_instr).

-export([do/3]).

%% @doc Compare the instruction runs `A' and `B' (their run.json read as `Infos').
-spec do({file:filename(), map()}, {file:filename(), map()}, map()) ->
    beamscale_cmd:outcome().
do({A, InfoA}, {B, InfoB}, Opts) ->
    case {beamscale_instr_store:read(A), beamscale_instr_store:read(B)} of
        {{ok, CA}, {ok, CB}} ->
            case beamscale_stats_instr:compare_runs(CA, CB) of
                [] -> {error, {nothing_in_common, A, B}};
                Results -> compared(Results, #{a => A, b => B, counter_a => counter(InfoA),
                                                counter_b => counter(InfoB),
                                                unit => unit(InfoA)}, Opts)
            end;
        {{error, _} = E, _} -> E;
        {_, E} -> E
    end.

compared(Results, #{b := B} = Runs, Opts) ->
    io:put_chars(beamscale_report_compare_instr:text(Results, Runs)),
    Out = maps:get(out, Opts, beamscale_format_rundir:path(B, compare)),
    ok = beamscale_store:write_file(Out, beamscale_report_compare_instr:html(Results, Runs)),
    io:format("~ts~n", [Out]),
    case maps:find(fail_if_slower, Opts) of
        error -> ok;
        {ok, Pct} ->
            case beamscale_stats_instr:more(Results, Pct) of
                [] -> ok;
                More -> {failed, io_lib:format("~b result(s) count more than ~ts % more "
                                               "instructions per call", [length(More), pct(Pct)])}
            end
    end.

%% The counter a run says it used; a run.json from elsewhere may say anything: shown bounded.
counter(#{<<"counter">> := C}) when is_binary(C) -> string:slice(C, 0, 40);
counter(_) -> <<"an unnamed counter">>.

%% `bench' counts calls less its empty loop's; `run' counts each iteration's run/3.
unit(#{<<"kind">> := <<"micro">>}) -> <<"per call, less the empty loop's">>;
unit(_) -> <<"per iteration">>.

pct(Pct) when is_integer(Pct) -> integer_to_list(Pct);
pct(Pct) -> beamscale_format_float:decimal(Pct).
