%% @doc The report's section on `ets_bench' (pure): the analogues of the ETS study's figures from
%% the summary rows. Time of the access phase against schedulers per table type and mix, one
%% series per concurrency option (paper figures 4–12); the insert and delete phases likewise;
%% one series per reader-group flag set (figures 13–18; flag sets named `rgN', as
%% `beamscale study ets' names them); one series per bucket-lock count (figures 20–22); and how
%% the paper's configurations map to today's OTP.
%%
%% `ets_bench' arguments are `[Type, Option, Mix, Size]' (see beamscale_bench_ets_bench); rows of
%% other benchmarks, and arguments that do not parse, are left out.
-module(beamscale_report_ets).

-export([section/1, figures/1]).
-export_type([figure/0]).

%% A figure: its title and series, each a label and points {Schedulers, Median, Low, High}.
-type figure() :: {binary(), [{binary(), [{integer(), float(), float(), float()}]}]}.

-define(MAPPING,
        [{"R11B–R16B: one reader-writer lock per table",
          "no option (none): still one lock per table"},
         {"write_concurrency on set: 16 (R13B02) or 64 (R16B) bucket locks",
          "w: 64 bucket locks; auto: the lock array adapts (OTP 25)"},
         {"write_concurrency on ordered_set: no effect (AVL tree, one lock)",
          "w on ordered_set: a contention-adapting tree since OTP 22"},
         {"read_concurrency: reader groups on the table lock",
          "r: the same; +rg still sets the largest number of reader groups (64 default)"},
         {"bucket locks set at compile time (section 6.1)",
          "{write_concurrency, {debug_hash_fixed_number_of_locks, N}}: 64 at least, power of 2"},
         {"one shared size counter",
          "{decentralized_counters, true} (OTP 23; default with auto and ordered_set w)"},
         {"1 scheduler: the option's locks are still taken",
          "+S 1:1: write_concurrency is turned off, so 1-scheduler points have one lock"},
         {"+rg N: min(N, schedulers) reader groups",
          "the same: with 2 schedulers every +rg of 2 or more is one setting"}]).

%% @doc The section's HTML, or nothing without `ets_bench' rows.
-spec section([beamscale_stats:row()]) -> iodata().
section(Rows) ->
    case figures(Rows) of
        [] -> [];
        Groups ->
            Charts = [[beamscale_report_html:el(h3, Heading),
                       beamscale_report_html:el(section, [{class, "charts"}],
                                         {safe, [chart(F) || F <- Figures]})]
                      || {Heading, Figures} <- Groups],
            [beamscale_report_html:el(p, "Median time of each phase against schedulers, with 95 % "
                                  "intervals (docs/studies/ets.md)."),
             Charts,
             beamscale_report_html:el(h3, "The paper's configurations on today's OTP"),
             beamscale_report_html:table(["2013 (R11B–R16B)", "today"],
                                  [[A, B] || {A, B} <- ?MAPPING])]
    end.

%% @doc The figures to draw, grouped under headings; groups without data are left out.
-spec figures([beamscale_stats:row()]) -> [{binary(), [figure()]}].
figures(Rows) ->
    Parsed = [P || R <- Rows, P <- parse(R)],
    Plain = [P || #{rg := default} = P <- Parsed],
    Groups = [{"Concurrency options: access phase (figures 4–12)", options_figures(Plain)},
              {"Concurrency options: insert and delete phases", phase_figures(Plain)},
              {"Reader groups, read and write concurrency (figures 13–18)", rg_figures(Parsed)},
              {"Bucket locks of a set table (figures 20–22)", lock_figures(Plain)}],
    [{unicode:characters_to_binary(H), Fs} || {H, Fs} <- Groups, Fs =/= []].

%%% Figures

options_figures(Rows) ->
    [figure([type(T), ", ", mix(M), ": options"],
            by(fun option_label/1,
               lists:sort(fun option_order/2,
                          [R || #{type := T1, mix := M1, phase := <<"access">>,
                                  option := O} = R <- Rows,
                                T1 =:= T, M1 =:= M, not is_locks(O)])))
     || {T, M} <- keys(Rows, [type, mix])].

%% The insert and delete phases do not depend on the mix: the lowest mix measured stands for all.
phase_figures(Rows) ->
    [figure([type(T), ": ", Phase, " phase (", mix(M), " run)"],
            by(fun option_label/1,
               lists:sort(fun option_order/2,
                          [R || #{type := T1, mix := M1, phase := P, option := O} = R <- Rows,
                                T1 =:= T, M1 =:= M, P =:= Phase, not is_locks(O)])))
     || T <- lists:usort([T || #{type := T} <- Rows]),
        M <- [lists:min([M || #{type := T1, mix := M} <- Rows, T1 =:= T])],
        Phase <- [<<"insert">>, <<"delete">>]].

rg_figures(Rows) ->
    Rg = [R || #{rg := G} = R <- Rows, G =/= default],
    [figure([type(T), ", ", mix(M), ": reader groups"],
            by(fun rg_label/1,
               lists:sort(fun rg_order/2,
                          [R || #{type := T1, mix := M1, phase := <<"access">>,
                                  option := rw} = R <- Rows, T1 =:= T, M1 =:= M])))
     || {T, M} <- keys(Rg, [type, mix])].

lock_figures(Rows) ->
    Locks = [R || #{option := O} = R <- Rows, is_locks(O)],
    [figure(["set, ", mix(M), ": bucket locks"],
            by(fun lock_label/1,
               lists:sort(fun lock_order/2,
                          [R || #{type := set, mix := M1, phase := <<"access">>,
                                  option := O} = R <- Rows,
                                M1 =:= M, O =:= rw orelse is_locks(O)])))
     || M <- lists:usort([M || #{mix := M} <- Locks])].

figure(Title, Series) -> {iolist_to_binary(Title), Series}.

chart({Title, Series}) ->
    beamscale_report_svg:line_chart([#{name => L, points => Ps} || {L, Ps} <- Series],
                             #{title => Title, x_label => "schedulers",
                               y_label => "median time (s), 95 % interval", unit => " s"}).

%% Series in first-seen order, points sorted by schedulers; several erls are told apart.
by(Label, Rows) ->
    Otps = lists:usort([O || #{otp := O} <- Rows]),
    Named = [{series_name(Label(R), O, Otps), R} || #{otp := O} = R <- Rows],
    Names = lists:foldl(fun({N, _}, Acc) ->
                                case lists:member(N, Acc) of
                                    true -> Acc;
                                    false -> Acc ++ [N]
                                end
                        end, [], Named),
    [{N, lists:sort([point(R) || {N1, R} <- Named, N1 =:= N])} || N <- Names].

series_name(Label, _Otp, [_]) -> iolist_to_binary(Label);
series_name(Label, Otp, _) -> iolist_to_binary([Label, " / ", Otp]).

point(#{schedulers := S, median := M, ci95_low := L, ci95_high := H}) -> {S, M, L, H}.

keys(Rows, Fields) ->
    lists:usort([list_to_tuple([maps:get(F, R) || F <- Fields]) || R <- Rows]).

%%% Labels and order

option_label(#{option := O}) -> io_lib:format("~0p", [O]).

%% Options in the study's order (beamscale_bench_ets_workload:options/1), unknown ones last.
option_order(#{option := A}, #{option := B}) -> option_rank(A) =< option_rank(B).

option_rank(O) ->
    Known = [none, r, w, rw, auto, r_auto, w_dc, w_nodc, auto_nodc],
    length(lists:takewhile(fun(K) -> K =/= O end, Known)).

rg_label(#{rg := default}) -> "default +rg";
rg_label(#{rg := N}) -> ["+rg ", integer_to_list(N)].

rg_order(#{rg := A}, #{rg := B}) -> rg_rank(A) =< rg_rank(B).

rg_rank(default) -> 1 bsl 30;
rg_rank(N) -> N.

lock_label(#{option := {locks, N}}) -> [integer_to_list(N), " locks"];
lock_label(#{option := O}) -> io_lib:format("~0p (default locks)", [O]).

lock_order(#{option := A}, #{option := B}) -> lock_rank(A) =< lock_rank(B).

lock_rank({locks, N}) -> N;
lock_rank(_) -> 0.

is_locks({locks, _}) -> true;
is_locks(_) -> false.

type(T) -> atom_to_list(T).

mix(M) -> [integer_to_list(M), " % lookups"].

%%% Parsing the rows

%% A summary row of ets_bench with its arguments and flag set read back.
parse(#{benchmark := <<"ets_bench">>, args := Args, erl_args := E} = Row) ->
    case beamscale_format_terms:term(Args) of
        {ok, [Type, Option, Mix, _Size]} when is_atom(Type), is_integer(Mix) ->
            [Row#{type => Type, option => Option, mix => Mix, rg => rg(E)}];
        _ -> []
    end;
parse(_) -> [].

%% Flag sets named rgN are the reader-group experiment; any other is a plain one.
rg(<<"rg", N/binary>>) ->
    try binary_to_integer(N) catch error:badarg -> default end;
rg(_) -> default.
