%% @doc The load page's parts by request name (Tsung's per-request table), pure: the table of
%% each name's requests, errors, latency and bytes (`summary.json''s `requests_by_name', the
%% columns of `requests.csv'), each name's p99 and requests over time from the seconds', and
%% an amoc scenario's tables by throttle and by coordinator name.
-module(beamscale_report_load_names).

-export([table/1, graphs/1, amoc/1]).

%% @doc The table, one row a name, then the table by tag pair (`requests_by_tag', the same
%% columns); nothing when the run has neither (an older run, a run without tags).
-spec table(beamscale_format_json:object()) -> iodata().
table(Summary) ->
    [table(Summary, <<"requests_by_name">>, "By request name", "request"),
     table(Summary, <<"requests_by_tag">>, "By tag", "tag")].

table(Summary, Key, Title, First) ->
    case lists:sort(maps:to_list(map(Summary, Key))) of
        [] -> [];
        Names ->
            [_ | Cols] = beamscale_format_load:requests_csv(),
            [beamscale_report_html:el(h3, Title),
             beamscale_report_html:table(
               [First | [beamscale_format_load:heading(E) || E <- Cols]],
               [[N | [cell(K, N, F) || #{key := K} <- Cols]] || {N, F} <- Names])]
    end.

%% @doc An amoc scenario's (`load --amoc', docs/amoc.md) tables: per throttle the rate set and
%% the rate its events went through over all the load nodes, per coordinator the users added
%% and the groups formed (`summary.json''s `amoc'); nothing for other runs.
-spec amoc(beamscale_format_json:object()) -> iodata().
amoc(Summary) ->
    Amoc = field(Summary, <<"amoc">>, fun is_map/1, #{}),
    Throttles = field(Amoc, <<"throttles">>, fun is_list/1, []),
    Coordinators = field(Amoc, <<"coordinators">>, fun is_list/1, []),
    [[[beamscale_report_html:el(h3, "amoc throttles"),
       beamscale_report_html:table(
         ["throttle", "rate set (/s)", "events let through", "over (s)", "achieved (/s)",
          "rate changes"],
         [[text(T, <<"name">>), value(T, <<"rate_per_s">>), value(T, <<"released">>),
           value(T, <<"span_s">>), value(T, <<"achieved_per_s">>), value(T, <<"changes">>)]
          || T <- Throttles, is_map(T)])] || Throttles =/= []],
     [[beamscale_report_html:el(h3, "amoc coordinators"),
       beamscale_report_html:table(
         ["coordinator", "users added", "groups formed (by size)", "timeouts", "resets",
          "stops"],
         [[text(C, <<"name">>), value(C, <<"added">>), groups(C), value(C, <<"timeouts">>),
           value(C, <<"resets">>), value(C, <<"stops">>)]
          || C <- Coordinators, is_map(C)])] || Coordinators =/= []]].

%% `4 of 2, 1 of 3'.
groups(C) ->
    Groups = [{S, N} || {S, N} <- lists:sort(maps:to_list(map(C, <<"groups">>))),
                        is_integer(N)],
    case Groups of
        [] -> "none";
        _ -> lists:join(", ", [[integer_to_binary(N), " of ", S] || {S, N} <- Groups])
    end.

%% @doc Per name over time: its p99 from the intended start, and its requests per second.
-spec graphs(beamscale_format_json:object()) ->
          [{binary(), binary(), binary(), [beamscale_report_svg:series()]}].
graphs(Summary) ->
    Secs = [{T, map(S, <<"requests_by_name">>)}
            || S <- field(Summary, <<"per_second">>, fun is_list/1, []),
               T <- [field(S, <<"t_s">>, fun is_number/1, null)], T =/= null],
    Names = lists:usort([N || {_, ByName} <- Secs, N <- maps:keys(ByName)]),
    Per = fun(Name, K) -> [{T, V} || {T, ByName} <- Secs,
                                     V <- [field(map(ByName, Name), K, fun is_number/1, null)],
                                     V =/= null] end,
    [{<<"latency by request name: p99 (from the intended start)">>, <<"ms">>, <<" ms">>,
      [#{name => N, points => [P || {_, V} = P <- Per(N, <<"p99_ms">>), V > 0]}
       || N <- Names]} || Names =/= []]
        ++ [{<<"requests by name">>, <<"requests/s">>, <<"/s">>,
             [#{name => N, points => Per(N, <<"requests">>)} || N <- Names]} || Names =/= []].

%%% Internals

text(M, K) -> field(M, K, fun is_binary/1, <<>>).

%% A number, or a word (a throttle's `unlimited').
value(M, K) ->
    case field(M, K, fun(V) -> is_number(V) orelse is_binary(V) end, null) of
        V when is_number(V) -> beamscale_report_svg:fmt(V);
        null -> "";
        V -> V
    end.


cell(K, _N, F) ->
    case field(F, atom_to_binary(K), fun is_number/1, null) of
        null -> "";
        V -> beamscale_report_svg:fmt(V)
    end.

%% A value of `summary.json' (decoded, so of any shape) when it is what is expected.
field(M, K, Is, Default) when is_map(M) ->
    V = maps:get(K, M, Default),
    case Is(V) of
        true -> V;
        false -> Default
    end;
field(_, _, _, Default) -> Default.

map(M, K) -> field(M, K, fun is_map/1, #{}).
