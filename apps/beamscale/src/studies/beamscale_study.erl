%% @doc The behaviour of a study: a fixed experiment from one of the seed papers, run at a size
%% chosen by `--version', that writes one run directory with its own report.
%%
%% A study module exports `info/0' (its name and one line), `run/1' and `format_error/1'. The
%% options map always holds `version', `name', `out' and `quiet', filled in by `defaults/1';
%% `schedulers' (a list of counts), `seed' and `web' (the live page's server, for the load
%% levels of the IO studies) only when given. A study whose benchmarks can run
%% in any run may also export `report_section/1': its section of the run page
%% (`beamscale_report_run'), given whenever its rows are there, so the page names no study.
-module(beamscale_study).

-export([studies/0, built/0, find/1, takes/2, defaults/1, report_sections/1]).
-export_type([opts/0, info/0]).

-type opts() :: #{version := beamscale_bench:version(), name := string(), out := string(),
                  quiet := boolean(), schedulers => [pos_integer()], seed => integer(),
                  web => beamscale_web:web(), erls => [{atom(), string()}],
                  profile => beamscale_profile:opts()}.
%% `options': which of `study''s options only some studies take it takes (`otp': several
%% releases; `profile': its levels profiled); none unless it says.
-type info() :: #{name := string(), summary := string(), options => [otp | profile]}.

-callback info() -> info().
-callback run(opts()) -> {ok, file:filename()} | {error, term()}.
-callback format_error(term()) -> iodata().
%% The study's section of a run page with these summary rows, or `none' without its rows.
-callback report_section([beamscale_stats:row()]) -> beamscale_report_run:section() | none.
-optional_callbacks([report_section/1]).

%% @doc The study modules, in the order `beamscale study' lists them.
-spec studies() -> [module()].
studies() ->
    [beamscale_study_ets,
     beamscale_study_smp_io,
     beamscale_study_pollset].

%% @doc The studies built into this escript, in `studies/0' order.
-spec built() -> [module()].
built() -> [M || M <- studies(), is_built(M)].

%% @doc Whether study `Mod' takes the option `Option' (`otp', `profile').
-spec takes(module(), otp | profile) -> boolean().
takes(Mod, Option) -> lists:member(Option, maps:get(options, Mod:info(), [])).

%% @doc The module of the study named `Name', when it is built into this escript.
-spec find(string()) -> {ok, module()} | error.
find(Name) ->
    case [M || M <- studies(), is_built(M), maps:get(name, M:info()) =:= Name] of
        [M] -> {ok, M};
        [] -> error
    end.

%% @doc The run page's sections of the studies built in, in `studies/0' order, for these rows.
-spec report_sections([beamscale_stats:row()]) -> [beamscale_report_run:section()].
report_sections(Rows) ->
    [Section || M <- studies(), is_built(M), erlang:function_exported(M, report_section, 1),
                Section <- [M:report_section(Rows)], Section =/= none].

%% @doc The options with defaults filled in: short size, output under runs/, a name from the
%% study and the time.
-spec defaults(#{atom() => term()}) -> opts().
defaults(Opts) ->
    maps:merge(#{version => short, out => "runs", quiet => false,
                 name => default_name(maps:get(study, Opts, "study"))},
               maps:without([study], Opts)).

is_built(Mod) ->
    code:ensure_loaded(Mod) =:= {module, Mod}.

default_name(Study) ->
    {{Y, Mo, D}, {H, Mi, S}} = calendar:local_time(),
    lists:flatten(io_lib:format("~s-~4..0b~2..0b~2..0b-~2..0b~2..0b~2..0b",
                                [Study, Y, Mo, D, H, Mi, S])).
