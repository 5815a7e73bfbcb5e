%% @doc Floats as people read them: positional notation where it is short enough, so a capacity
%% of 1600.0 is written `1600.0', not `1.6e3' as OTP's shortest form gives it. Every text reads
%% back as the same float (the shortest digits are kept; only the point moves).
-module(beamscale_format_float).

-export([decimal/1]).

%% Decimal exponents written positionally: from 1.0e-6 up to just below 1.0e15. Outside this
%% the scientific form is shorter and clearer, and it is kept.
-define(MIN_EXP, -6).
-define(MAX_EXP, 14).

%% @doc The float's shortest round-trip digits, with the point placed positionally when its
%% decimal exponent lies in [?MIN_EXP, ?MAX_EXP].
-spec decimal(float()) -> binary().
decimal(F) when is_float(F) ->
    Short = float_to_list(F, [short]),
    case string:split(Short, "e") of
        [_] -> list_to_binary(Short);
        [Mantissa, ExpText] -> positional(Short, Mantissa, list_to_integer(ExpText))
    end.

positional(Short, _Mantissa, Exp) when Exp < ?MIN_EXP; Exp > ?MAX_EXP ->
    list_to_binary(Short);
positional(_Short, [$- | Mantissa], Exp) ->
    <<$-, (positional_digits(Mantissa, Exp))/binary>>;
positional(_Short, Mantissa, Exp) ->
    positional_digits(Mantissa, Exp).

%% Mantissa "D.DDD" (or "D"): its digits, trailing zeros dropped, and where the point falls.
positional_digits(Mantissa, Exp) ->
    {Int, Frac} = case string:split(Mantissa, ".") of
                      [I] -> {I, ""};
                      [I, Fr] -> {I, Fr}
                  end,
    Digits = case string:trim(Int ++ Frac, trailing, "0") of
                 "" -> "0";
                 D -> D
             end,
    list_to_binary(place_point(Digits, length(Int) + Exp)).

place_point(Digits, Point) when Point =< 0 ->
    "0." ++ lists:duplicate(-Point, $0) ++ Digits;
place_point(Digits, Point) when Point >= length(Digits) ->
    Digits ++ lists:duplicate(Point - length(Digits), $0) ++ ".0";
place_point(Digits, Point) ->
    {Whole, Fraction} = lists:split(Point, Digits),
    Whole ++ "." ++ Fraction.
