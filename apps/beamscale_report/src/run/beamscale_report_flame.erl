%% @doc A flame graph of folded stacks as inline SVG (root at the bottom), a frame's colour its
%% category (`beamscale_stats_profile'), its name, samples and share on hover (`<title>'), and
%% a search box that marks the frames whose name holds the text (one small inline script for
%% the page: `script/0'). Pure. Frames narrower than a pixel's fraction are left out, which
%% bounds the SVG of a deep profile.
-module(beamscale_report_flame).

-export([svg/2, script/0, colour/1, legend/0]).

-define(WIDTH, 1200).
-define(ROW, 16).
%% Frames below this share of the width (0.1 %) are not drawn.
-define(MIN_SHARE, 0.001).

%% A node of the merged call tree: samples, children by name.
-record(t, {n = 0 :: non_neg_integer(), kids = #{} :: #{binary() => #t{}}}).

%% @doc The flame graph of `Folded', its search box identified by `Id' (unique on the page).
-spec svg(beamscale_format_perf:folded(), iodata()) -> iodata().
svg(Folded, Id) ->
    Tree = maps:fold(fun(Stack, N, T) -> insert(Stack, N, T) end, #t{}, Folded),
    Total = max(1, Tree#t.n),
    Depth = depth(Tree, Total),
    Height = (Depth + 1) * ?ROW,
    Rects = kids(Tree, 0, Depth - 1, Total),
    Search = ["<p><input type=\"search\" placeholder=\"find a function\" ",
              "oninput=\"bsFlame(this, '", Id, "')\"> <span id=\"", Id, "-hits\"></span></p>"],
    [Search,
     io_lib:format("<svg id=\"~s\" class=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" "
                   "viewBox=\"0 0 ~b ~b\" width=\"100%\" font-size=\"11\" "
                   "font-family=\"monospace\">", [Id, ?WIDTH, Height]),
     Rects, "</svg>\n"].

insert([], N, T) -> T#t{n = T#t.n + N};
insert([F | Rest], N, #t{n = M, kids = Kids} = T) ->
    Kid = maps:get(F, Kids, #t{}),
    T#t{n = M + N, kids = Kids#{F => insert(Rest, N, Kid)}}.

depth(#t{kids = Kids}, Total) ->
    Wide = [K || K <- maps:values(Kids), K#t.n / Total >= ?MIN_SHARE],
    1 + lists:max([0 | [depth(K, Total) || K <- Wide]]).

%% Children drawn left to right by name (as flamegraph.pl), `X' in samples, `Level' rows
%% above the bottom counted down.
kids(#t{kids = Kids}, X, Level, Total) ->
    {_, Out} = lists:foldl(fun({Name, K}, {X0, Acc}) ->
                                   {X0 + K#t.n, [frame(Name, K, X0, Level, Total) | Acc]}
                           end, {X, []}, lists:sort(maps:to_list(Kids))),
    lists:reverse(Out).

frame(_Name, #t{n = N}, _X, _Level, Total) when N / Total < ?MIN_SHARE -> [];
frame(Name, #t{n = N} = K, X, Level, Total) ->
    W = ?WIDTH * N / Total,
    Px = ?WIDTH * X / Total,
    Y = Level * ?ROW,
    Title = io_lib:format("~ts (~b samples, ~.1f%)", [Name, N, 100 * N / Total]),
    Label = label(Name, W),
    [io_lib:format("<g><title>~ts</title><rect x=\"~.1f\" y=\"~b\" width=\"~.1f\" "
                   "height=\"~b\" fill=\"~s\" stroke=\"#fff\" stroke-width=\"0.3\"/>",
                   [beamscale_report_html:escape(Title), Px, Y, W, ?ROW - 1,
                    colour(frame_category(Name))]),
     [io_lib:format("<text x=\"~.1f\" y=\"~b\">~ts</text>",
                    [Px + 2, Y + ?ROW - 4, beamscale_report_html:escape(Label)])
      || Label =/= <<>>],
     "</g>\n",
     kids(K, X, Level - 1, Total)].

%% As much of the name as fits at about 7 pixels a character.
label(Name, W) ->
    Fits = trunc((W - 4) / 7),
    Chars = string:length(Name),
    if Fits < 3 -> <<>>;
       Chars =< Fits -> Name;
       true -> unicode:characters_to_binary([string:slice(Name, 0, Fits - 2), ".."])
    end.

frame_category(Name) ->
    case beamscale_stats_profile:category(Name) of
        none -> emulator;
        wait -> scheduler;
        C -> C
    end.

%% @doc A category's colour, the same in the graph, its legend and the tables.
-spec colour(beamscale_stats_profile:category()) -> string().
colour(erlang) -> "#e8a33c";
colour(gc) -> "#9ccc65";
colour(ets) -> "#4fc3f7";
colour(messages) -> "#ba68c8";
colour(io) -> "#4db6ac";
colour(scheduler) -> "#bdbdbd";
colour(locks) -> "#e53935";
colour(alloc) -> "#ffd54f";
colour(emulator) -> "#a1887f";
colour(kernel) -> "#90a4ae".

%% @doc The colours' legend, as HTML.
-spec legend() -> iodata().
legend() ->
    ["<p>",
     [io_lib:format("<span style=\"background:~s;padding:0 .4em;margin-right:.3em\">~s</span>",
                    [colour(C), C]) || C <- beamscale_stats_profile:categories()],
     "</p>\n"].

%% @doc The search box's script, once on the page: frames whose title holds the text turn
%% purple, the count of their samples' share is shown beside the box.
-spec script() -> iodata().
script() ->
    <<"<script>function bsFlame(box,id){var q=box.value.toLowerCase(),n=0;"
      "document.querySelectorAll('#'+id+' g').forEach(function(g){"
      "var r=g.querySelector('rect'),t=g.querySelector('title').textContent;"
      "if(!r.dataset.f)r.dataset.f=r.getAttribute('fill');"
      "var hit=q&&t.toLowerCase().indexOf(q)>=0;"
      "r.setAttribute('fill',hit?'#e040fb':r.dataset.f);if(hit)n++;});"
      "document.getElementById(id+'-hits').textContent=q?n+' frames':'';}</script>\n">>.
