%% @doc The "Releases compared" section of a run page, pure: for each erl against the first
%% (beamscale_stats_otp), per benchmark, argument set and scheduler count, which is faster and
%% by how much, with the 95 % interval of the ratio of medians; a difference the interval does
%% not tell from none says so.
-module(beamscale_report_otp).

-export([sections/1, sections/2, verdict/3]).

%% @doc The section; none when the run had one erl.
-spec sections([beamscale_stats_otp:pair()]) -> [beamscale_report_run:section()].
sections(Pairs) -> sections(Pairs, {[], []}).

%% @doc The section with the sampler's figures each erl did not give
%% (`beamscale_stats_otp:unread/1'); none when the run had one erl.
-spec sections([beamscale_stats_otp:pair()], {[binary()], [{atom(), [binary()]}]}) ->
    [beamscale_report_run:section()].
sections([], {[_, _ | _], _} = Unread) -> [{"Releases compared", unread(Unread)}];
sections([], _) -> [];
sections(Pairs, Unread) ->
    [{"Releases compared", [intro(), [pair(P) || P <- Pairs], unread(Unread)]}].

%% Sampled on fewer than two erls: nothing to say; else which figures an erl left empty.
unread({[_, _ | _] = Erls, []}) ->
    el(p, ["The sampler read every figure on every erl (", lists:join(", ", Erls), ")."]);
unread({[_, _ | _], Unread}) ->
    [el(h3, "Sampler figures not read on every erl"),
     el(p, "Columns of samples.csv an erl left empty in all its rows: that release or "
           "flavour does not give the figure (not 0). Every other figure was read on all."),
     beamscale_report_html:table([<<"figure">>, <<"unavailable on">>],
                                 [[atom_to_binary(F), iolist_to_binary(lists:join(", ", Es))]
                                  || {F, Es} <- Unread])];
unread(_) -> [].

intro() ->
    el(p, "Each erl against the first (the oldest release): the ratio of median times "
          "OTHER / BASE, below 1 when OTHER is faster, with its 95 % interval. A difference "
          "is called only when the interval leaves out 1 and p < 0.05.").

pair(#{base := Base, other := Other, results := Results}) ->
    Head = ["benchmark", "args", "schedulers", "nodes", ["median ", Base, " (s)"],
            ["median ", Other, " (s)"], "ratio", "95 % interval", "which is faster"],
    [el(h3, [Other, " against ", Base]),
     beamscale_report_html:table([iolist_to_binary(H) || H <- Head],
                                 [row(Base, Other, R) || R <- Results])].

row(Base, Other, #{key := {B, Phase, Args, _Otp, ErlArgs, S, N}, median_a := MA,
                   median_b := MB} = R) ->
    [label(B, Phase, B), label(Args, ErlArgs, <<"default">>), S, N, r4(MA), r4(MB), ratio(R),
     interval(R), verdict(Base, Other, R)].

%% A key's part, with its second part in brackets unless that says nothing (the phase of a
%% one-phase benchmark is its name; erl_args `default').
label(A, Same, Same) -> A;
label(A, B, _) -> <<A/binary, " (", B/binary, ")">>.

ratio(#{ratio := null}) -> "-";
ratio(#{ratio := X}) -> r4(X).

interval(#{ratio_low := null}) -> "-";
interval(#{ratio_low := L, ratio_high := H}) -> io_lib:format("~.3f to ~.3f", [L, H]).

%% @doc Which erl is faster and by how much (the share of time the faster saves, with the
%% interval's bounds), or that the interval does not tell them apart.
-spec verdict(binary(), binary(), beamscale_stats_compare:result()) -> binary().
verdict(_Base, _Other, #{ratio := null}) -> <<"not measured on both">>;
verdict(_Base, _Other, #{significant := false}) -> <<"no clear difference">>;
verdict(_Base, Other, #{ratio := X, ratio_low := L, ratio_high := H}) when X < 1 ->
    fmt("~ts faster by ~.1f % (~.1f to ~.1f %)", [Other, pct(X), pct(H), pct(L)]);
verdict(Base, _Other, #{ratio := X, ratio_low := L, ratio_high := H}) ->
    fmt("~ts faster by ~.1f % (~.1f to ~.1f %)", [Base, pct(1 / X), pct(1 / L), pct(1 / H)]).

%% The share of the slower's time the faster saves, for a ratio faster / slower.
pct(Ratio) -> 100 * (1 - Ratio).

fmt(Format, Args) -> unicode:characters_to_binary(io_lib:format(Format, Args)).

r4(X) -> list_to_binary(io_lib:format("~.4g", [float(X)])).

el(Tag, Content) -> beamscale_report_html:el(Tag, unicode:characters_to_binary(Content)).
