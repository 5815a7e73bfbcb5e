%% @doc The load page's parts by request name (Tsung's per-request table), pure: the table of
%% each name's requests, errors, latency and bytes (`summary.json''s `requests_by_name', the
%% columns of `requests.csv'), and each name's p99 and requests over time from the seconds'.
-module(beamscale_report_load_names).

-export([table/1, graphs/1]).

%% @doc The table, one row a name; nothing when the run has no names (an older run).
-spec table(beamscale_format_json:object()) -> iodata().
table(Summary) ->
    case lists:sort(maps:to_list(map(Summary, <<"requests_by_name">>))) of
        [] -> [];
        Names ->
            Cols = beamscale_format_load:requests_csv(),
            [beamscale_report_html:el(h3, "By request name"),
             beamscale_report_html:table(
               [beamscale_format_load:heading(E) || E <- Cols],
               [[cell(K, N, F) || #{key := K} <- Cols] || {N, F} <- Names])]
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

cell(name, N, _F) -> N;
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
