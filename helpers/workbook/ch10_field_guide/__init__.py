"""Chapter 10 (Field guide): each slow pattern's reproduction and fix
(`cases`), and what the chapter shows of each (`guide`)."""
