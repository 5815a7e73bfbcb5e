%% @doc The figures of a run directory that a history keeps: one entry per benchmark,
%% environment and metric, read generically so that fields added later (the instruction clock's,
%% a statistic's) are kept without a change here.
%%
%% `run' and `bench' directories (a `measurements.csv'): every numeric field of each row of
%% `summary.json''s `results'; its interval is `K_low'/`K_high' (`ci95_low'/`ci95_high' for the
%% median). `load' and `saturate' (`summary.json' of an object): every number at most two objects
%% deep (`latency_corrected.p99_ms'); arrays are left out (per-second rows). A metric is
%% `primary' (what `history show', `page' and `check' look at by default) when it has an
%% interval, apart from speedup and efficiency (ratios to another environment), and for a load
%% its throughput, median and p99 latency and errors.
-module(beamscale_history_metrics).

-export([read/1, format_error/1]).
-export_type([entry/0]).

-type entry() :: #{benchmark := binary(), environment := #{binary() => binary()},
                   metric := binary(), value := number(), low := number() | null,
                   high := number() | null, better := binary(), primary := boolean()}.

-define(MAX_JSON, 64 * 1024 * 1024).
-define(MAX_ENTRIES, 5000).
-define(MAX_NAME, 200).
-define(KEYS, [<<"benchmark">>, <<"phase">>, <<"args">>, <<"otp">>, <<"erl_args">>,
               <<"schedulers">>, <<"nodes">>]).
-define(LOAD_PRIMARY, [<<"requests_per_s">>, <<"latency_corrected.p50_ms">>,
                       <<"latency_corrected.p99_ms">>, <<"errors">>]).

%% @doc The kind, clock and entries of run directory `Dir'.
-spec read(file:filename()) ->
          {ok, #{kind := binary(), clock := binary(), run := map(), entries := [entry()]}}
          | {error, {?MODULE, term()}}.
read(Dir) ->
    case {filelib:is_dir(Dir), json(Dir, summary_json)} of
        {false, _} -> {error, {?MODULE, {not_a_directory, Dir}}};
        {true, {error, _} = E} -> E;
        {true, {ok, Summary}} ->
            Run = case json(Dir, run_json) of {ok, R} -> R; {error, _} -> #{} end,
            Kind = kind(Dir, Run, Summary),
            Entries = lists:sublist(entries(Kind, Run, Summary, Dir), ?MAX_ENTRIES),
            case Entries of
                [] -> {error, {?MODULE, {no_figures, Dir}}};
                _ -> {ok, #{kind => Kind, clock => clock(Run), run => Run, entries => Entries}}
            end
    end.

%% @doc One line for an error of `read/1'.
-spec format_error(term()) -> iodata().
format_error({not_a_directory, Dir}) -> [Dir, ": not a directory"];
format_error({no_summary, File}) ->
    [File, ": missing; record a finished run (beamscale report DIR rebuilds it)"];
format_error({bad_json, File}) -> [File, ": not a JSON object"];
format_error({no_figures, Dir}) -> [Dir, ": summary.json holds no figure to record"].

%%% Internals

json(Dir, Name) ->
    File = beamscale_format_rundir:path(Dir, Name),
    case beamscale_format_file:read(File, ?MAX_JSON) of
        {ok, Bin} ->
            case beamscale_format_json:decode(Bin) of
                {ok, #{} = Obj} -> {ok, Obj};
                _ -> {error, {?MODULE, {bad_json, File}}}
            end;
        {error, _} -> {error, {?MODULE, {no_summary, File}}}
    end.

kind(Dir, Run, Summary) ->
    case {filelib:is_regular(beamscale_format_rundir:path(Dir, measurements)), Run, Summary} of
        {true, #{<<"kind">> := <<"micro">>}, _} -> <<"bench">>;
        {true, _, _} -> <<"run">>;
        {false, #{<<"kind">> := <<"saturate">>}, _} -> <<"saturate">>;
        {false, _, #{<<"capacity_per_s">> := _}} -> <<"saturate">>;
        {false, _, _} -> <<"load">>
    end.

clock(#{<<"config">> := #{<<"clock">> := C}}) when is_binary(C) -> C;
clock(#{<<"clock">> := C}) when is_binary(C) -> C;
clock(_) -> <<"wall">>.

entries(Kind, Run, #{<<"results">> := Rows}, Dir) when Kind =:= <<"run">>;
                                                       Kind =:= <<"bench">> ->
    lists:append([row_entries(Run, R) || #{} = R <- list(Rows)]) ++ instructions(Run, Dir);
entries(Kind, Run, Summary, Dir) when Kind =:= <<"load">>; Kind =:= <<"saturate">> ->
    Name = bounded(case Run of
                       #{<<"label">> := L} when is_binary(L), L =/= <<>> -> L;
                       #{<<"scenario">> := S} when is_binary(S) -> filename:basename(S);
                       _ -> list_to_binary(filename:basename(filename:absname(Dir)))
                   end),
    Env = #{<<"release">> => text(maps:get(<<"otp_release">>, Run, <<>>))},
    Flat = flatten(Summary, <<>>, 2),
    [entry(Name, Env, K, V, interval(K, Flat), Kind) || {K, V} <- Flat, not is_bound(K, Flat)];
entries(_Kind, _Run, _Summary, _Dir) -> [].

list(L) when is_list(L) -> L;
list(_) -> [].

row_entries(Run, Row) ->
    Name = bench_name(Row),
    Env = environment(Run, Row),
    Flat = [{K, V} || {K, V} <- lists:sort(maps:to_list(Row)), is_number(V),
                      not lists:member(K, ?KEYS)],
    [entry(Name, Env, K, V, interval(K, Flat), <<"run">>) || {K, V} <- Flat,
                                                            not is_bound(K, Flat), K =/= <<"n">>].

%% The instruction clock's counts (`instructions.csv', a row per counted sample): per benchmark
%% and environment, each launch's least count (as `bench' takes it), the median of those with
%% their least and greatest as the interval. summary.json carries only the times.
instructions(Run, Dir) ->
    case beamscale_format_file:read(beamscale_format_rundir:path(Dir, instructions), ?MAX_JSON) of
        {ok, Bin} ->
            case beamscale_format_csv:parse(Bin) of
                {[Cols | Rows], _} -> count_entries(Run, Cols, Rows);
                _ -> []
            end;
        {error, _} -> []
    end.

count_entries(Run, Cols, Rows) ->
    Least = lists:foldl(fun(Fields, Acc) -> least(Cols, Fields, Acc) end, #{},
                        [R || R <- Rows, length(R) =:= length(Cols)]),
    ByKey = lists:foldl(fun({{Key, _Launch}, X}, Acc) ->
                                maps:update_with(Key, fun(Xs) -> [X | Xs] end, [X], Acc)
                        end, #{}, lists:sort(maps:to_list(Least))),
    [begin
         Row = maps:from_list(Key),
         entry(bench_name(Row), environment(Run, Row), <<"instructions">>, median(Xs),
               {lists:min(Xs), lists:max(Xs)}, <<"run">>)
     end || {Key, Xs} <- lists:sort(maps:to_list(ByKey))].

least(Cols, Fields, Acc) ->
    Row = lists:zip(Cols, Fields),
    case beamscale_format_csv:number(proplists:get_value(<<"instructions">>, Row, <<>>)) of
        X when is_number(X) ->
            Key = [KV || {K, _} = KV <- Row, lists:member(K, ?KEYS)],
            maps:update_with({Key, proplists:get_value(<<"launch">>, Row)},
                             fun(Y) -> min(X, Y) end, X, Acc);
        _ -> Acc
    end.

median(Xs) ->
    S = lists:sort(Xs),
    N = length(S),
    (lists:nth((N + 1) div 2, S) + lists:nth(N div 2 + 1, S)) / 2.

bench_name(Row) ->
    B = text(maps:get(<<"benchmark">>, Row, <<"?">>)),
    P = text(maps:get(<<"phase">>, Row, B)),
    A = text(maps:get(<<"args">>, Row, <<>>)),
    bounded(iolist_to_binary([B, [[" ", P] || P =/= B, P =/= <<>>],
                              [[" ", A] || A =/= <<>>, A =/= <<"[]">>]])).

environment(Run, Row) ->
    Otp = text(maps:get(<<"otp">>, Row, <<>>)),
    Flags = text(maps:get(<<"erl_args">>, Row, <<>>)),
    #{<<"otp">> => Otp, <<"erl_args">> => Flags,
      <<"release">> => text(dig([<<"erls">>, Otp, <<"otp_release">>], Run)),
      <<"flags">> => text(dig([<<"config">>, <<"erl_args">>, Flags], Run)),
      <<"schedulers">> => text(maps:get(<<"schedulers">>, Row, <<>>)),
      <<"nodes">> => text(maps:get(<<"nodes">>, Row, <<>>))}.

dig([], V) -> V;
dig([K | Rest], #{} = M) when is_map_key(K, M) -> dig(Rest, maps:get(K, M));
dig(_, _) -> <<>>.

%% Numbers at most Depth objects deep, keys joined by dots.
flatten(Obj, Prefix, Depth) ->
    lists:append([case V of
                      _ when is_number(V) -> [{key(Prefix, K), V}];
                      #{} when Depth > 1 -> flatten(V, key(Prefix, K), Depth - 1);
                      _ -> []
                  end || {K, V} <- lists:sort(maps:to_list(Obj))]).

key(<<>>, K) -> bounded(K);
key(P, K) -> bounded(<<P/binary, ".", K/binary>>).

%% The bounds of K: K_low/K_high, A_low_B/A_high_B (capacity_low_per_s), ci95_* for the median.
bound_names(<<"median">>) -> [{<<"ci95_low">>, <<"ci95_high">>}];
bound_names(K) ->
    [{<<K/binary, "_low">>, <<K/binary, "_high">>}
     | case binary:split(K, <<"_">>) of
           [A, B] -> [{<<A/binary, "_low_", B/binary>>, <<A/binary, "_high_", B/binary>>}];
           [_] -> []
       end].

interval(K, Flat) ->
    case [{L, H} || {LK, HK} <- bound_names(K), {_, L} <- [lists:keyfind(LK, 1, Flat)],
                    {_, H} <- [lists:keyfind(HK, 1, Flat)]] of
        [LH | _] -> LH;
        [] -> none
    end.

is_bound(K, _Flat) when K =:= <<"ci95_low">>; K =:= <<"ci95_high">> -> true;
is_bound(K, Flat) ->
    lists:any(fun({Other, _}) ->
                      Other =/= K andalso lists:any(fun({L, H}) -> K =:= L orelse K =:= H end,
                                                    bound_names(Other))
              end, Flat).

entry(Name, Env, K, V, Interval, Kind) ->
    {Low, High} = case Interval of
                      {L, H} when is_number(L), is_number(H) -> {L, H};
                      _ -> {null, null}
                  end,
    Primary = case Kind of
                  <<"load">> -> lists:member(K, ?LOAD_PRIMARY);
                  _ -> Low =/= null andalso not lists:member(K, [<<"speedup">>, <<"efficiency">>])
              end,
    #{benchmark => Name, environment => Env, metric => K, value => V, low => Low, high => High,
      better => better(K), primary => Primary}.

%% Rates, capacities and gains are better higher; times, counts of errors and the rest lower.
better(K) ->
    Higher = [<<"per_s">>, <<"calls_s">>, <<"rate">>, <<"capacity">>, <<"throughput">>,
              <<"speedup">>, <<"efficiency">>, <<"peak">>],
    case lists:any(fun(W) -> binary:match(K, W) =/= nomatch end, Higher) of
        true -> <<"higher">>;
        false -> <<"lower">>
    end.

text(B) when is_binary(B) -> bounded(B);
text(N) when is_integer(N) -> integer_to_binary(N);
text(F) when is_float(F) -> beamscale_format_float:decimal(F);
text(_) -> <<>>.

%% Names come from files: at most ?MAX_NAME characters (cut on a character, not a byte).
bounded(B) when byte_size(B) > ?MAX_NAME ->
    case unicode:characters_to_binary(string:slice(B, 0, ?MAX_NAME)) of
        Cut when is_binary(Cut) -> Cut;
        _ -> binary:part(B, 0, ?MAX_NAME)
    end;
bounded(B) -> B.
