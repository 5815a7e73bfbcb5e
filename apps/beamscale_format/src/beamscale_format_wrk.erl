%% @doc The output of `wrk --latency' read into figures, pure: requests per second, and the
%% latency mean and percentiles in milliseconds.
-module(beamscale_format_wrk).

-export([parse/1, columns/0]).

-define(PERCENTILES, [{"50%", p50_ms}, {"90%", p90_ms}, {"99%", p99_ms}]).

%% @doc The figures `parse/1' returns, in the order of `wrk.csv'.
-spec columns() -> [atom()].
columns() -> [requests, requests_per_s, mean_ms, p50_ms, p90_ms, p99_ms, socket_errors].

%% @doc The figures of one wrk run, or an error when its output has no `Requests/sec' line.
-spec parse(unicode:chardata()) -> {ok, #{atom() => number()}} | {error, no_result}.
parse(Text) ->
    Lines = [string:lexemes(L, " \t") || L <- string:lexemes(unicode:characters_to_list(Text),
                                                              "\r\n")],
    Found = lists:foldl(fun line/2, #{socket_errors => 0}, Lines),
    case Found of
        #{requests_per_s := _} -> {ok, Found};
        _ -> {error, no_result}
    end.

line(["Requests/sec:", N | _], Acc) -> put_num(requests_per_s, N, Acc);
line(["Latency", Mean | _], Acc) -> put_ms(mean_ms, Mean, Acc);
line([Count, "requests", "in" | _], Acc) -> put_num(requests, Count, Acc);
line(["Socket", "errors:" | Rest], Acc) ->
    Errors = [V || N <- Rest, V <- [num(string:trim(N, both, ","))], V =/= undefined],
    Acc#{socket_errors => lists:sum(Errors)};
line([P, Value], Acc) ->
    case lists:keyfind(P, 1, ?PERCENTILES) of
        {_, Key} -> put_ms(Key, Value, Acc);
        false -> Acc
    end;
line(_, Acc) -> Acc.

put_num(Key, Text, Acc) ->
    case num(Text) of
        undefined -> Acc;
        V -> Acc#{Key => V}
    end.

%% wrk prints durations with a unit: us, ms, s or m.
put_ms(Key, Text, Acc) ->
    {Digits, Unit} = lists:splitwith(fun(C) -> (C >= $0 andalso C =< $9) orelse C =:= $. end,
                                     Text),
    Scale = case Unit of
                "us" -> 0.001;
                "ms" -> 1;
                "s" -> 1000;
                "m" -> 60000;
                _ -> none
            end,
    case {num(Digits), Scale} of
        {V, S} when is_number(V), is_number(S) -> Acc#{Key => V * S};
        _ -> Acc
    end.

num(Text) -> beamscale_format_csv:number(unicode:characters_to_binary(Text)).
