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
    Secs = [{T, map(S, <<"requests_by_name">>)} || S <- list(Summary, <<"per_second">>),
                                                   T <- [get(S, <<"t_s">>)], is_number(T)],
    Names = lists:usort([N || {_, ByName} <- Secs, N <- maps:keys(ByName)]),
    Per = fun(Name, K) -> [{T, V} || {T, ByName} <- Secs, F <- [map(ByName, Name)],
                                     V <- [get(F, K)], is_number(V)] end,
    [{<<"latency by request name: p99 (from the intended start)">>, <<"ms">>, <<" ms">>,
      [#{name => N, points => [P || {_, V} = P <- Per(N, <<"p99_ms">>), V > 0]}
       || N <- Names]} || Names =/= []]
        ++ [{<<"requests by name">>, <<"requests/s">>, <<"/s">>,
             [#{name => N, points => Per(N, <<"requests">>)} || N <- Names]} || Names =/= []].

%%% Internals

cell(name, N, _F) -> N;
cell(K, _N, F) ->
    case get(F, atom_to_binary(K)) of
        V when is_number(V) -> beamscale_report_svg:fmt(V);
        _ -> ""
    end.

get(M, K) when is_map(M) -> maps:get(K, M, null);
get(_, _) -> null.

list(M, K) ->
    case get(M, K) of
        L when is_list(L) -> L;
        _ -> []
    end.

map(M, K) ->
    case get(M, K) of
        V when is_map(V) -> V;
        _ -> #{}
    end.
