%% @doc The raw iterations of a suite run, for the run page's time charts (pure): each
%% iteration's seconds drawn as a small grey point beside the median of its environment, so a
%% reader sees the spread and the outliers the interval summarises.
-module(beamscale_report_iterations).

-export([by_key/1, series/2]).
-export_type([iterations/0]).

%% Seconds of every iteration, per benchmark, phase, args, erl, flags, schedulers and nodes.
-type iterations() :: #{beamscale_stats:key() => [float()]}.

%% @doc The iterations of `measurements.csv' rows (as read: binaries), grouped by key; rows
%% whose numbers do not parse are left out.
-spec by_key([#{atom() => binary()}]) -> iterations().
by_key(Measurements) ->
    lists:foldl(fun(Row, Acc) ->
                        case key(Row) of
                            {ok, Key, Seconds} ->
                                maps:update_with(Key, fun(L) -> [Seconds | L] end, [Seconds],
                                                 Acc);
                            error -> Acc
                        end
                end, #{}, Measurements).

%% @doc One marker-only series of the iterations of these summary rows, shifted right of the
%% medians; none when there are no iterations.
-spec series([beamscale_stats:row()], iterations()) -> [beamscale_report_svg:series()].
series(Rows, Iterations) ->
    Points = [{S, Sec} || #{schedulers := S} = R <- Rows,
                          Sec <- lists:sort(maps:get(row_key(R), Iterations, []))],
    [#{name => <<"iterations">>, points => Points, line => false, r => 2, dx => 6,
       color => "#888"} || Points =/= []].

%%% Internals

row_key(#{benchmark := B, phase := P, args := A, otp := O, erl_args := E, schedulers := S,
          nodes := N}) ->
    {B, P, A, O, E, S, N}.

key(#{benchmark := B, phase := P, args := A, otp := O, erl_args := E, schedulers := S,
      nodes := N, seconds := Sec}) ->
    case {number(S), number(N), number(Sec)} of
        {Si, Ni, Secs} when is_integer(Si), is_integer(Ni), is_number(Secs) ->
            {ok, {B, P, A, O, E, Si, Ni}, float(Secs)};
        _ -> error
    end;
key(_) -> error.

number(V) when is_number(V) -> V;
number(V) -> beamscale_format_csv:number(V).
