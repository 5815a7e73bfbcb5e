%% @doc The random parts of a load, pure (explicit `rand' states): Poisson arrival gaps, think
%% times and the weighted choice of a session.
-module(beamscale_load_arrival).

-export([gap/2, schedule/3, check_dist/1, think/2, pick/2]).
-export_type([dist/0]).

%% Think-time distributions, in milliseconds.
-type dist() :: {constant, number()} | {exponential, number()} | {uniform, number(), number()}
              | {var, binary(), number(), constant | exponential}.

%% @doc The gap to the next arrival of a Poisson process of `Rate' per second, in seconds.
-spec gap(float(), rand:state()) -> {float(), rand:state()}.
gap(Rate, R0) ->
    {U, R1} = rand:uniform_real_s(R0),
    {-math:log(U) / Rate, R1}.

%% @doc Arrival times (seconds from the start) of a Poisson process over `Duration' seconds.
-spec schedule(float(), number(), rand:state()) -> [float()].
schedule(Rate, Duration, R) -> schedule(Rate, Duration, 0.0, R, []).

schedule(Rate, Duration, T, R0, Acc) ->
    {G, R1} = gap(Rate, R0),
    case T + G of
        Next when Next < Duration -> schedule(Rate, Duration, Next, R1, [Next | Acc]);
        _ -> lists:reverse(Acc)
    end.

%% @doc A think-time distribution from its scenario form (a bare number is constant).
-spec check_dist(term()) -> {ok, dist()} | error.
check_dist(Ms) when is_number(Ms), Ms >= 0 -> {ok, {constant, Ms}};
check_dist({constant, Ms}) when is_number(Ms), Ms >= 0 -> {ok, {constant, Ms}};
check_dist({exponential, M}) when is_number(M), M > 0 -> {ok, {exponential, M}};
check_dist({uniform, A, B}) when is_number(A), is_number(B), A >= 0, B >= A ->
    {ok, {uniform, A, B}};
%% The user's variable `Name' in milliseconds (Tsung's `<thinktime value="%%_name%%">', seconds:
%% scaled by 1000), constant or as an exponential's mean.
check_dist({var, Name}) -> check_dist({var, Name, 1, constant});
check_dist({var, Name, Scale, How}) when is_number(Scale), Scale > 0,
                                         How =:= constant orelse How =:= exponential ->
    case io_lib:printable_unicode_list(Name) andalso Name =/= [] of
        true -> {ok, {var, unicode:characters_to_binary(Name), Scale, How}};
        false -> error
    end;
check_dist(_) -> error.

%% @doc One think time in milliseconds.
-spec think(dist(), rand:state()) -> {float(), rand:state()}.
think({constant, Ms}, R) -> {float(Ms), R};
think({exponential, Mean}, R0) ->
    {U, R1} = rand:uniform_real_s(R0),
    {-math:log(U) * Mean, R1};
think({uniform, A, B}, R0) ->
    {U, R1} = rand:uniform_real_s(R0),
    {A + U * (B - A), R1}.

%% @doc Pick one of `Items' (maps with a `weight') with probability proportional to its weight.
-spec pick([#{weight := number(), _ => _}], rand:state()) -> {map(), rand:state()}.
pick([Only], R) -> {Only, R};
pick(Items, R0) ->
    {U, R1} = rand:uniform_real_s(R0),
    Total = lists:sum([W || #{weight := W} <- Items]),
    {walk(Items, U * Total), R1}.

walk([Last], _X) -> Last;
walk([#{weight := W} = I | _], X) when X < W -> I;
walk([#{weight := W} | Rest], X) -> walk(Rest, X - W).
